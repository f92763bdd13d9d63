#include "kernel_signature.h"

#include <regex>

namespace phantora::interposer
{

namespace
{

std::string_view Trim(std::string_view s)
{
    while (!s.empty() && s.front() == ' ')
    {
        s.remove_prefix(1);
    }
    while (!s.empty() && s.back() == ' ')
    {
        s.remove_suffix(1);
    }
    return s;
}

bool Opens(char c)
{
    return c == '(' || c == '<' || c == '{' || c == '[';
}

bool Closes(char c)
{
    return c == ')' || c == '>' || c == '}' || c == ']';
}

/// Drops a trailing qualifier word (" __restrict__", " volatile") from a type.
std::string_view WithoutTrailing(std::string_view type, std::string_view word)
{
    if (type.size() > word.size() && type.substr(type.size() - word.size()) == word &&
        type[type.size() - word.size() - 1] == ' ')
    {
        return Trim(type.substr(0, type.size() - word.size()));
    }
    return type;
}

bool IsWrittenRawPointer(std::string_view type)
{
    type = WithoutTrailing(WithoutTrailing(type, "__restrict__"), "__restrict");
    if (type.size() < 2 || type.back() != '*' || type[type.size() - 2] == '*')
    {
        return false;
    }
    const std::string_view pointee = Trim(type.substr(0, type.size() - 1));
    if (pointee.find_first_of("<>(){}[]") != std::string_view::npos)
    {
        return false; // a pointer to a template or function type: not a plain buffer
    }
    const bool constFirst = pointee.substr(0, 6) == "const ";
    const bool constLast = pointee.size() >= 6 && pointee.substr(pointee.size() - 6) == " const";
    return !constFirst && !constLast;
}

bool IsOperandArray(std::string_view type)
{
    static const std::regex operands(R"((std::array|at::detail::Array)<char ?\*, ?\d+(ul|u|l)?>)");
    return std::regex_match(type.begin(), type.end(), operands);
}

} // namespace

std::vector<std::string> ParameterTypes(std::string_view demangled)
{
    demangled = Trim(demangled);
    if (demangled.empty() || demangled.back() != ')')
    {
        return {};
    }
    // The parameter list is the last top-level parenthesised group.
    int depth = 0;
    std::size_t open = std::string_view::npos;
    for (std::size_t i = demangled.size(); i-- > 0;)
    {
        const char c = demangled[i];
        if (Closes(c))
        {
            ++depth;
        }
        else if (Opens(c) && --depth == 0)
        {
            open = i;
            break;
        }
    }
    if (open == std::string_view::npos || demangled[open] != '(')
    {
        return {};
    }
    const std::string_view list = demangled.substr(open + 1, demangled.size() - open - 2);
    std::vector<std::string> types;
    depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= list.size(); ++i)
    {
        const char c = i < list.size() ? list[i] : ',';
        if (Opens(c))
        {
            ++depth;
        }
        else if (Closes(c))
        {
            --depth;
        }
        else if (c == ',' && depth == 0)
        {
            const std::string_view type = Trim(list.substr(start, i - start));
            if (!type.empty() && type != "void")
            {
                types.emplace_back(type);
            }
            start = i + 1;
        }
    }
    return types;
}

std::vector<ParamWrites> WrittenPointerParams(std::string_view demangled)
{
    std::vector<ParamWrites> writes;
    for (const std::string& type : ParameterTypes(demangled))
    {
        if (IsWrittenRawPointer(type) || IsOperandArray(type))
        {
            writes.push_back(ParamWrites::First);
        }
        else if (type.rfind("at::native::ReduceOp<", 0) == 0 ||
                 type.rfind("at::native::(anonymous namespace)::ReduceOp<", 0) == 0)
        {
            writes.push_back(ParamWrites::AllButFirstAddress);
        }
        else
        {
            writes.push_back(ParamWrites::Nothing);
        }
    }
    return writes;
}

} // namespace phantora::interposer
