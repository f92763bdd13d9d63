#include "program_name.h"

#include <filesystem>
#include <sstream>

namespace phantora::profile
{

namespace
{
std::string Base(const std::string& path)
{
    return std::filesystem::path(path).filename().string();
}

bool IsPython(const std::string& exe)
{
    const std::string b = Base(exe);
    return b.rfind("python", 0) == 0;
}
} // namespace

std::string ProgramName(const std::vector<std::string>& argv)
{
    if (argv.empty())
    {
        return "";
    }
    if (!IsPython(argv[0]))
    {
        return Base(argv[0]);
    }
    for (std::size_t i = 1; i < argv.size(); ++i)
    {
        const std::string& a = argv[i];
        if (a == "-m" && i + 1 < argv.size())
        {
            return argv[i + 1];
        }
        if (a == "-c")
        {
            return Base(argv[0]); // inline code: the interpreter is all there is to go by
        }
        if (a == "-W" || a == "-X")
        {
            ++i; // an option with a value
            continue;
        }
        if (!a.empty() && a[0] != '-')
        {
            return Base(a);
        }
    }
    return Base(argv[0]);
}

std::string ProgramName(const std::string& commandLine)
{
    std::istringstream in(commandLine);
    std::vector<std::string> words;
    for (std::string w; in >> w;)
    {
        words.push_back(w);
    }
    return ProgramName(words);
}

} // namespace phantora::profile
