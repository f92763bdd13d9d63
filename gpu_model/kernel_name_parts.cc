#include "kernel_name_parts.h"

#include <array>
#include <charconv>
#include <utility>

namespace phantora
{

namespace
{

std::string_view Trim(std::string_view s)
{
    while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
        s.remove_suffix(1);
    return s;
}

/// \p s split at the commas outside any <>, (), {} or [] pair, each part trimmed.
std::vector<std::string_view> SplitTopLevel(std::string_view s)
{
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
    {
        const char c = s[i];
        if (c == '<' || c == '(' || c == '{' || c == '[')
            ++depth;
        else if (c == '>' || c == ')' || c == '}' || c == ']')
            --depth;
        else if (c == ',' && depth == 0)
        {
            out.push_back(Trim(s.substr(from, i - from)));
            from = i + 1;
        }
    }
    if (!Trim(s.substr(from)).empty())
    {
        out.push_back(Trim(s.substr(from)));
    }
    return out;
}

/// Where the "<...>" opened at \p open closes (its '>'), or npos.
std::size_t Closing(std::string_view s, std::size_t open)
{
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i)
    {
        if (s[i] == '<' || s[i] == '(')
            ++depth;
        else if (s[i] == '>' || s[i] == ')')
        {
            if (--depth == 0)
                return i;
        }
    }
    return std::string_view::npos;
}

bool IdentifierChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

} // namespace

std::optional<uint32_t> ElementBytes(std::string_view type)
{
    type = Trim(type);
    if (type.substr(0, 6) == "const ")
        type = Trim(type.substr(6));
    if (type.size() > 6 && type.substr(type.size() - 6) == " const")
        type = Trim(type.substr(0, type.size() - 6));
    static constexpr std::array<std::pair<std::string_view, uint32_t>, 27> kSizes = {{
        {"float", 4},
        {"double", 8},
        {"c10::BFloat16", 2},
        {"c10::Half", 2},
        {"cutlass::bfloat16_t", 2},
        {"cutlass::half_t", 2},
        {"__nv_bfloat16", 2},
        {"__half", 2},
        {"short", 2},
        {"unsigned short", 2},
        {"int", 4},
        {"unsigned int", 4},
        {"long", 8},
        {"unsigned long", 8},
        {"long long", 8},
        {"unsigned long long", 8},
        {"bool", 1},
        {"char", 1},
        {"signed char", 1},
        {"unsigned char", 1},
        {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e5m2", 1},
        {"c10::Float8_e4m3fnuz", 1},
        {"c10::Float8_e5m2fnuz", 1},
        {"c10::complex<float>", 8},
        {"c10::complex<double>", 16},
        {"c10::complex<c10::Half>", 4},
    }};
    for (const auto& [name, bytes] : kSizes)
    {
        if (type == name)
            return bytes;
    }
    // ATen's copies of untyped bytes: OpaqueType<N> is N bytes
    const std::size_t opaque = type.find("OpaqueType<");
    if (opaque != std::string_view::npos)
    {
        const std::string_view n = type.substr(opaque + 11, type.find('>', opaque) - opaque - 11);
        if (auto v = IntegerArg(n); v && *v > 0 && *v <= 64)
            return static_cast<uint32_t>(*v);
    }
    return std::nullopt;
}

std::vector<uint32_t> ElementTypesIn(std::string_view text)
{
    std::vector<uint32_t> out;
    std::size_t from = 0;
    auto token = [&](std::size_t end)
    {
        if (end > from)
        {
            if (auto b = ElementBytes(text.substr(from, end - from)))
                out.push_back(*b);
        }
    };
    for (std::size_t i = 0; i < text.size(); ++i)
    {
        const char c = text[i];
        if (c == '<' || c == '>' || c == ',' || c == '(' || c == ')' || c == '{' || c == '}' ||
            c == '*' || c == '&')
        {
            // "OpaqueType<2u>" names a size with its template argument: keep it whole
            if (c == '<' && i >= 10 && text.substr(i - 10, 10) == "OpaqueType")
            {
                const std::size_t close = text.find('>', i);
                if (close != std::string_view::npos)
                {
                    i = close;
                    token(i + 1);
                    from = i + 1;
                    continue;
                }
            }
            token(i);
            from = i + 1;
        }
    }
    token(text.size());
    return out;
}

std::vector<std::string_view> TemplateArgs(std::string_view name, std::string_view tmpl)
{
    std::size_t at = 0;
    while ((at = name.find(tmpl, at)) != std::string_view::npos)
    {
        const std::size_t open = at + tmpl.size();
        const bool wordStart = at == 0 || !IdentifierChar(name[at - 1]);
        if (wordStart && open < name.size() && name[open] == '<')
        {
            const std::size_t close = Closing(name, open);
            if (close == std::string_view::npos)
                return {};
            return SplitTopLevel(name.substr(open + 1, close - open - 1));
        }
        at = open;
    }
    return {};
}

std::optional<uint64_t> IntegerArg(std::string_view arg)
{
    arg = Trim(arg);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), v);
    if (ec != std::errc{} || p == arg.data())
        return std::nullopt;
    const std::string_view suffix(p, static_cast<std::size_t>(arg.data() + arg.size() - p));
    if (suffix.empty() || suffix == "u" || suffix == "ul" || suffix == "l" || suffix == "ull")
        return v;
    return std::nullopt;
}

std::optional<std::vector<std::string_view>> LambdaParams(std::string_view text)
{
    const std::size_t at = text.rfind("{lambda(");
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::size_t open = at + 7;
    const std::size_t close = Closing(text, open);
    if (close == std::string_view::npos)
        return std::nullopt;
    return SplitTopLevel(text.substr(open + 1, close - open - 1));
}

} // namespace phantora
