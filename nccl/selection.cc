#include "selection.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace phantora::nccl
{

namespace
{

std::string Lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view Trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    {
        s.remove_suffix(1);
    }
    return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep)
{
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true)
    {
        const size_t end = s.find(sep, start);
        parts.push_back(
            Trim(s.substr(start, end == std::string_view::npos ? s.npos : end - start)));
        if (end == std::string_view::npos)
        {
            return parts;
        }
        start = end + 1;
    }
}

/// NCCL's names for its collective functions in NCCL_ALGO / NCCL_PROTO entries
/// (ncclFuncStr, src/init.cc).
std::optional<CollectiveKind> CollectiveOf(const std::string& name)
{
    static const std::array<std::pair<const char*, CollectiveKind>, 5> kNames{{
        {"broadcast", CollectiveKind::Broadcast},
        {"reduce", CollectiveKind::Reduce},
        {"allgather", CollectiveKind::AllGather},
        {"reducescatter", CollectiveKind::ReduceScatter},
        {"allreduce", CollectiveKind::AllReduce},
    }};
    for (const auto& [n, k] : kNames)
    {
        if (name == n)
        {
            return k;
        }
    }
    return std::nullopt;
}

/// The list (without the collective prefix) that applies to \p kind, "" when none, as
/// NCCL 2.28's parseList (src/graph/tuning.cc) reads a spec: ';'-separated entries, only the
/// first may go without a collective prefix (it applies to every collective), a later
/// entry for a collective replaces what came before for it.  The point-to-point
/// operations (all-to-all, send/recv) are no NCCL collective function: only the
/// prefix-less entry reaches them.
std::string_view ListFor(std::string_view spec, CollectiveKind kind, const char* variable)
{
    std::string_view list;
    bool first = true;
    for (std::string_view entry : Split(spec, ';'))
    {
        const bool isFirst = first;
        first = false;
        if (entry.empty())
        {
            continue;
        }
        const size_t colon = entry.find(':');
        if (colon == std::string_view::npos)
        {
            if (!isFirst)
            {
                throw std::invalid_argument(std::string(variable) + " '" + std::string(spec) +
                                            "': all entries except the first must have a "
                                            "collective prefix (as NCCL requires), '" +
                                            std::string(entry) + "' has none");
            }
            list = entry;
            continue;
        }
        const std::string op = Lower(Trim(entry.substr(0, colon)));
        const auto k = CollectiveOf(op);
        if (!k)
        {
            throw std::invalid_argument(std::string(variable) + ": unknown collective '" + op +
                                        "' (expected broadcast, reduce, allgather, "
                                        "reducescatter or allreduce)");
        }
        if (*k == kind)
        {
            list = Trim(entry.substr(colon + 1));
        }
    }
    return list;
}

/// Names of one kind of choice: the modelled ones map to a value, the known others to none.
template <class T> struct Vocabulary
{
    const char* variable;
    std::vector<std::pair<std::string, std::optional<T>>> names;
    std::string expected;
};

template <class T>
std::vector<T> Allowed(const std::string& spec, CollectiveKind kind, const Vocabulary<T>& vocab)
{
    std::vector<T> all;
    for (const auto& [name, value] : vocab.names)
    {
        if (value && std::find(all.begin(), all.end(), *value) == all.end())
        {
            all.push_back(*value);
        }
    }
    std::string_view list = ListFor(spec, kind, vocab.variable);
    if (list.empty())
    {
        return all;
    }
    const bool exclude = list.front() == '^';
    if (exclude)
    {
        list.remove_prefix(1);
    }
    std::vector<T> named;
    for (std::string_view raw : Split(list, ','))
    {
        const std::string token = Lower(raw);
        auto it = std::find_if(vocab.names.begin(), vocab.names.end(),
                               [&](const auto& n) { return n.first == token; });
        if (it == vocab.names.end())
        {
            throw std::invalid_argument(std::string(vocab.variable) + ": unknown name '" +
                                        std::string(raw) + "' (expected " + vocab.expected + ")");
        }
        if (it->second)
        {
            named.push_back(*it->second);
        }
    }
    std::vector<T> out;
    for (T v : all)
    {
        const bool listed = std::find(named.begin(), named.end(), v) != named.end();
        if (listed != exclude)
        {
            out.push_back(v);
        }
    }
    if (out.empty())
    {
        throw std::invalid_argument(std::string(vocab.variable) + " '" + spec + "' leaves " +
                                    CollectiveName(kind) + " nothing Phantora models (it models " +
                                    vocab.expected + ")");
    }
    return out;
}

/// NCCL 2.28's ncclAlgoStr: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT.
const Vocabulary<Algorithm>& Algorithms()
{
    static const Vocabulary<Algorithm> v{
        "NCCL_ALGO",
        {{"tree", Algorithm::Tree},
         {"ring", Algorithm::Ring},
         {"collnetdirect", std::nullopt},
         {"collnetchain", std::nullopt},
         {"nvls", Algorithm::Nvls},
         {"nvlstree", Algorithm::NvlsTree},
         {"pat", std::nullopt}},
        "tree, ring, nvls, nvlstree; collnetdirect, collnetchain and pat are accepted but not "
        "modelled"};
    return v;
}

const Vocabulary<Protocol>& Protocols()
{
    static const Vocabulary<Protocol> v{
        "NCCL_PROTO",
        {{"ll", Protocol::LL}, {"ll128", Protocol::LL128}, {"simple", Protocol::Simple}},
        "ll, ll128, simple"};
    return v;
}

constexpr std::array<CollectiveKind, 7> kEveryKind{
    CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
    CollectiveKind::Broadcast, CollectiveKind::Reduce,    CollectiveKind::AllToAll,
    CollectiveKind::SendRecv};

} // namespace

std::vector<Algorithm> AllowedAlgorithms(const std::string& spec, CollectiveKind kind)
{
    if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv)
    {
        // NCCL's point-to-point path has no algorithm to choose: NCCL_ALGO does not reach
        // it (the spec is still checked, as NCCL parses it at communicator creation).
        ListFor(spec, kind, Algorithms().variable);
        return {Algorithm::Ring};
    }
    return Allowed(spec, kind, Algorithms());
}

std::vector<Protocol> AllowedProtocols(const std::string& spec, CollectiveKind kind)
{
    return Allowed(spec, kind, Protocols());
}

void ValidateAlgorithmSpec(const std::string& spec)
{
    for (CollectiveKind k : kEveryKind)
    {
        AllowedAlgorithms(spec, k);
    }
}

void ValidateProtocolSpec(const std::string& spec)
{
    for (CollectiveKind k : kEveryKind)
    {
        AllowedProtocols(spec, k);
    }
}

} // namespace phantora::nccl
