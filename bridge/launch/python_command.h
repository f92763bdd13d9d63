// Whether a rank command is `python SCRIPT ARGS` or `python -m MODULE ARGS`, the shapes
// the fork server (python/phantora_fork_server.py) can start in a forked process.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace phantora
{

struct PythonCommand
{
    std::string interpreter;          ///< the command's first word, as given
    std::vector<std::string> options; ///< interpreter options before the program (-u, -X dev)
    std::vector<std::string> program; ///< {SCRIPT, ARGS...} or {"-m", MODULE, ARGS...}
};

/// Whether \p word (a command's first word) names a Python interpreter: python, python3,
/// python3.11, a venv's bin/python.
bool IsPythonInterpreter(const std::string& word);

/// \p command split into interpreter, its options and the program; nullopt when it is
/// anything else (torchrun, a shell, `python -c`, a script read from stdin, an option
/// the fork server cannot pass on), with the reason in \p why.
std::optional<PythonCommand> ParsePythonCommand(const std::vector<std::string>& command,
                                                std::string* why = nullptr);

} // namespace phantora
