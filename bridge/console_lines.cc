#include "console_lines.h"

#include <algorithm>

namespace phantora
{

std::vector<std::string> WrapLines(const std::string& text, std::size_t width)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size())
    {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string rest = text.substr(start, end - start);
        start = end + 1;
        if (end == text.size() && rest.empty() && !out.empty())
        {
            break; // a final newline ends the text, it starts no empty line
        }
        const std::size_t lead = rest.find_first_not_of(' ');
        const std::string indent(lead == std::string::npos ? 0 : lead, ' ');
        // Continuations indented, unless the indent would leave the line too little room.
        const std::string more = indent.size() + 2 + 8 < width ? indent + "  " : "";
        const std::size_t room = width - more.size();
        bool first = true;
        while ((first ? rest.size() : more.size() + rest.size()) > width)
        {
            const std::size_t fits = first ? width : room;
            std::size_t cut = rest.rfind(' ', fits);
            // No space after the indent within the line: cut the word itself.
            const bool hard = cut == std::string::npos || cut <= (first ? indent.size() : 0);
            if (hard)
            {
                cut = fits;
            }
            out.push_back((first ? "" : more) + rest.substr(0, cut));
            rest.erase(0, hard ? cut : cut + 1);
            first = false;
        }
        out.push_back((first ? "" : more) + rest);
    }
    return out;
}

void PrintWrapped(std::FILE* to, const std::string& text, std::size_t width)
{
    for (const std::string& line : WrapLines(text, width))
    {
        std::fprintf(to, "%s\n", line.c_str());
    }
}

} // namespace phantora
