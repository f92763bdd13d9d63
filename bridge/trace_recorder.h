// A Chrome / Perfetto trace of the simulated run (--trace): one process per rank,
// one track for its CPU's blocking calls and one per stream, and a "network" process
// with one track per GPU pair that collectives' transfers crossed.  Written in a
// fixed order, so the same run gives the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace phantora
{

class TraceRecorder
{
public:
    /// One span on \p track ("cpu", "stream 0", ...) of \p rank.
    void Span(int rank, std::string track, std::string name, int64_t startNs, int64_t endNs);
    /// One span on \p track of the network process.
    void NetworkSpan(std::string track, std::string name, int64_t startNs, int64_t endNs);
    /// The run ended before its ranks did (\p end: RunEndName): the trace holds what was
    /// simulated until then and says so, in its metadata and as a marker at that instant.
    void MarkIncomplete(std::string end, std::string reason, int64_t atNs);
    /// Throws std::runtime_error naming \p file when it cannot be written.
    void Write(const std::filesystem::path& file) const;
    std::size_t Size() const { return m_spans.size(); }

    /// The process id the network's tracks appear under.
    static constexpr int kNetworkPid = 1 << 20;

private:
    struct Entry
    {
        int rank;
        std::string track;
        std::string name;
        int64_t startNs;
        int64_t endNs;
    };
    std::vector<Entry> m_spans;
    struct Incomplete
    {
        std::string end;
        std::string reason;
        int64_t atNs{0};
    };
    std::optional<Incomplete> m_incomplete;
};

} // namespace phantora
