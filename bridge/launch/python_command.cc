#include "python_command.h"

#include <filesystem>
#include <regex>
#include <set>

namespace phantora
{

bool IsPythonInterpreter(const std::string& word)
{
    static const std::regex interpreter(R"(python[0-9.]*)");
    return std::regex_match(std::filesystem::path(word).filename().string(), interpreter);
}

std::optional<PythonCommand> ParsePythonCommand(const std::vector<std::string>& command,
                                                std::string* why)
{
    auto no = [why](std::string reason) -> std::optional<PythonCommand>
    {
        if (why)
        {
            *why = std::move(reason);
        }
        return std::nullopt;
    };
    if (command.empty())
    {
        return no("no command");
    }
    if (!IsPythonInterpreter(command[0]))
    {
        return no("'" + command[0] +
                  "' is not a Python interpreter (python, python3, python3.11...)");
    }
    // Options that only set the interpreter up: the fork server's interpreter takes them.
    static const std::set<std::string> alone = {"-u", "-O",  "-OO", "-B", "-E", "-s", "-S", "-I",
                                                "-b", "-bb", "-q",  "-v", "-d", "-R", "-P"};
    static const std::set<std::string> withValue = {"-X", "-W"};
    PythonCommand out;
    out.interpreter = command[0];
    for (std::size_t i = 1; i < command.size(); ++i)
    {
        const std::string& a = command[i];
        if (alone.count(a))
        {
            out.options.push_back(a);
            continue;
        }
        if (withValue.count(a))
        {
            if (i + 1 >= command.size())
            {
                return no(a + " needs a value");
            }
            out.options.push_back(a);
            out.options.push_back(command[++i]);
            continue;
        }
        if ((a.rfind("-X", 0) == 0 || a.rfind("-W", 0) == 0) && a.size() > 2)
        {
            out.options.push_back(a);
            continue;
        }
        if (a == "-m")
        {
            if (i + 1 >= command.size())
            {
                return no("-m needs a module");
            }
            out.program.assign(command.begin() + static_cast<std::ptrdiff_t>(i), command.end());
            return out;
        }
        if (a == "-" || a.rfind("-", 0) == 0)
        {
            return no("the interpreter option '" + a +
                      "' (only SCRIPT or -m MODULE, after -u, -O, -X..., can be forked)");
        }
        out.program.assign(command.begin() + static_cast<std::ptrdiff_t>(i), command.end());
        return out;
    }
    return no("no script or -m MODULE after the interpreter");
}

} // namespace phantora
