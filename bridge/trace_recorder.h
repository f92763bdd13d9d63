// A Chrome / Perfetto trace of the simulated run (--trace): one process per rank,
// one track for its CPU's blocking calls and one per stream.  Written in a fixed
// order, so the same run gives the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace phantora
{

class TraceRecorder
{
public:
    /// One span on \p track ("cpu", "stream 0", ...) of \p rank.
    void Span(int rank, std::string track, std::string name, int64_t startNs, int64_t endNs);
    /// Throws std::runtime_error naming \p file when it cannot be written.
    void Write(const std::filesystem::path& file) const;
    std::size_t Size() const { return m_spans.size(); }

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
};

} // namespace phantora
