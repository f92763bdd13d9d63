#include "program_name.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
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

bool EndsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Launchers that start the program they are given (recording DDP on one GPU runs
// `torchrun ... train.py`; the simulator starts `python train.py` itself).
bool IsLauncher(const std::string& name)
{
    static const char* const kLaunchers[] = {"torchrun",
                                             "torch.distributed.run",
                                             "torch.distributed.launch",
                                             "mpirun",
                                             "mpiexec",
                                             "srun",
                                             "deepspeed"};
    for (const char* l : kLaunchers)
    {
        if (name == l)
        {
            return true;
        }
    }
    return false;
}

/// The launched program: its first Python script or module (torchrun's `-m` / `--module`:
/// `torchrun ... -m torchtitan.train` runs what `python -m torchtitan.train` does), else
/// what follows an interpreter.
std::string Launched(const std::vector<std::string>& argv, std::size_t from)
{
    for (std::size_t i = from; i < argv.size(); ++i)
    {
        if ((argv[i] == "-m" || argv[i] == "--module") && i + 1 < argv.size())
        {
            return argv[i + 1];
        }
        if (EndsWith(argv[i], ".py"))
        {
            return Base(argv[i]);
        }
        if (IsPython(argv[i]))
        {
            return ProgramName(std::vector<std::string>(argv.begin() + i, argv.end()));
        }
    }
    return "";
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
        const std::string exe = Base(argv[0]);
        const std::string launched = IsLauncher(exe) ? Launched(argv, 1) : "";
        return launched.empty() ? exe : launched;
    }
    for (std::size_t i = 1; i < argv.size(); ++i)
    {
        const std::string& a = argv[i];
        if (a == "-m" && i + 1 < argv.size())
        {
            const std::string launched = IsLauncher(argv[i + 1]) ? Launched(argv, i + 2) : "";
            return launched.empty() ? argv[i + 1] : launched;
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

namespace
{
std::vector<std::string> Words(const std::string& commandLine)
{
    std::istringstream in(commandLine);
    std::vector<std::string> words;
    for (std::string w; in >> w;)
    {
        words.push_back(w);
    }
    return words;
}
} // namespace

std::string ProgramName(const std::string& commandLine)
{
    return ProgramName(Words(commandLine));
}

std::string ProgramArguments(const std::vector<std::string>& argv)
{
    const std::string program = ProgramName(argv);
    std::string out;
    bool after = false;
    for (std::size_t i = 0; i < argv.size(); ++i)
    {
        if (after)
        {
            out += out.empty() ? "" : " ";
            out += argv[i];
        }
        else if (!program.empty() &&
                 (Base(argv[i]) == program ||
                  (i > 0 && (argv[i - 1] == "-m" || argv[i - 1] == "--module") &&
                   argv[i] == program)))
        {
            after = true;
        }
    }
    return out;
}

std::string ProgramArguments(const std::string& commandLine)
{
    return ProgramArguments(Words(commandLine));
}

namespace
{
/// The number \p text starts with ("4", "2:4" for torchrun's elastic node range: its
/// lower bound); nullopt if it does not start with one.
std::optional<int> LeadingCount(const std::string& text)
{
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data() || value < 1)
    {
        return std::nullopt;
    }
    return value;
}
} // namespace

int LaunchedRanks(const std::vector<std::string>& argv)
{
    // The options of the launchers IsLauncher knows that set how many processes they start,
    // and whether the count multiplies the others (torchrun's nodes times processes each).
    static const std::map<std::string, bool> kCounts = {{"--nproc_per_node", false},
                                                        {"--nproc-per-node", false},
                                                        {"--nproc", false},
                                                        {"--nnodes", true},
                                                        {"-np", false},
                                                        {"-n", false},
                                                        {"--ntasks", false},
                                                        {"--num_gpus", false},
                                                        {"--num_nodes", true}};
    const std::string program = ProgramName(argv);
    int perNode = 1;
    int nodes = 1;
    for (std::size_t i = 0; i < argv.size(); ++i)
    {
        const std::string& a = argv[i];
        if (!program.empty() && (Base(a) == program || a == program))
        {
            break; // the program's own arguments are not the launcher's
        }
        const std::size_t eq = a.find('=');
        const std::string flag = a.substr(0, eq);
        const auto known = kCounts.find(flag);
        if (known == kCounts.end())
        {
            continue;
        }
        const std::optional<int> n =
            eq != std::string::npos
                ? LeadingCount(a.substr(eq + 1))
                : (i + 1 < argv.size() ? LeadingCount(argv[i + 1]) : std::nullopt);
        if (n)
        {
            (known->second ? nodes : perNode) = *n;
        }
    }
    // a command's own counts, so a huge one saturates instead of overflowing
    return static_cast<int>(
        std::min<int64_t>(int64_t{perNode} * nodes, std::numeric_limits<int>::max()));
}

int LaunchedRanks(const std::string& commandLine)
{
    return LaunchedRanks(Words(commandLine));
}

} // namespace phantora::profile
