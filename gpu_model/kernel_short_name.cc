#include "kernel_short_name.h"

#include <cstdint>
#include <cstdlib>
#include <cxxabi.h>
#include <fmt/format.h>
#include <memory>

namespace phantora
{

namespace
{

std::string Demangled(std::string_view name)
{
    if (!name.starts_with("_Z"))
    {
        return std::string(name);
    }
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status), &std::free);
    return status == 0 && d ? std::string(d.get()) : std::string(name);
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to)
{
    for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    {
        s.replace(pos, from.size(), to);
    }
}

} // namespace

std::string KernelShortNames::BaseName(std::string_view full)
{
    std::string s = Demangled(full);
    // Parenthesised words that are part of a name, not a parameter list.
    ReplaceAll(s, "(anonymous namespace)", "anonymous_namespace");
    // Keep only what is outside every bracket, up to the parameter list.
    std::string top;
    int depth = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
    {
        const char c = s[i];
        if (s.compare(i, 8, "operator") == 0 && depth == 0)
        {
            // operator(), operator<, operator<< ... are names, not brackets.
            std::size_t end = i + 8;
            while (end < s.size() && std::string_view("()<>=!+-*/%&|^~[],").find(s[end]) !=
                                         std::string_view::npos)
            {
                if (s[end] == '(' && end + 1 < s.size() && s[end + 1] == ')')
                {
                    end += 2;
                    break;
                }
                if (s[end] == '(')
                {
                    break;
                }
                ++end;
            }
            top.append(s, i, end - i);
            i = end - 1;
            continue;
        }
        if (c == '(' && depth == 0)
        {
            break; // the parameter list
        }
        if (c == '<' || c == '(' || c == '{' || c == '[')
        {
            ++depth;
            continue;
        }
        if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0)
        {
            --depth;
            continue;
        }
        if (depth == 0)
        {
            top += c;
        }
    }
    while (!top.empty() && top.back() == ' ')
    {
        top.pop_back();
    }
    if (const auto colons = top.rfind("::"); colons != std::string::npos)
    {
        top.erase(0, colons + 2);
    }
    if (const auto space = top.rfind(' '); space != std::string::npos)
    {
        top.erase(0, space + 1); // the return type
    }
    return top.empty() ? std::string(full) : top;
}

std::string KernelShortNames::Hash(std::string_view full)
{
    uint64_t h = 14695981039346656037ULL; // FNV-1a 64 offset basis
    for (const unsigned char c : full)
    {
        h = (h ^ c) * 1099511628211ULL;
    }
    return fmt::format("{:06x}", h & 0xffffffULL);
}

void KernelShortNames::Add(const std::string& full)
{
    m_byBase[BaseName(full)].insert(full);
}

std::string KernelShortNames::Get(const std::string& full) const
{
    std::string base = BaseName(full);
    auto it = m_byBase.find(base);
    if (it != m_byBase.end() && (it->second.size() > 1 || !it->second.count(full)))
    {
        return base + "#" + Hash(full);
    }
    return base;
}

std::string Ellipsize(const std::string& text, std::size_t width)
{
    if (text.size() <= width || width < 4)
    {
        return text;
    }
    return text.substr(0, width - 3) + "...";
}

} // namespace phantora
