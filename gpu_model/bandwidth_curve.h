// How long moving a number of bytes takes, from measured ops that moved known bytes:
// a copy, a memset, a kernel whose launch says its bytes (kernel_traffic.h).  Near a size
// the time is a latency plus the bytes at a bandwidth (the fixed cost of issuing the op,
// then the memory system's rate), so the curve is that line, fitted to the measurements
// at the nearest sizes: a small copy is mostly latency and a large one mostly bandwidth,
// and the line through each one's neighbours carries both, where scaling one measurement
// by the bytes would charge a large op a small one's latency per byte.
#pragma once

#include "gpu_model/profile/op_key.h"
#include "gpu_model/profile/op_stats.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace phantora
{

class BandwidthCurve
{
public:
    using Entry = std::pair<const profile::OpKey, profile::OpStats>;
    /// Which measurements a query may not use (OpEstimator::Hidden).
    using Hidden = std::function<bool(const Entry&)>;

    /// \p neighbours: how many measurements, the nearest in size, each line is fitted to;
    /// \p peakBytesPerSecond: what the hardware can move at most (0: unknown), so that no
    /// line, however noisy its measurements, charges a byte less than that.
    explicit BandwidthCurve(std::size_t neighbours = 4, double peakBytesPerSecond = 0)
        : m_neighbours(neighbours),
          m_minNsPerByte(peakBytesPerSecond > 0 ? 1e9 / peakBytesPerSecond : 0)
    {
    }

    /// \p entry measured \p ns moving \p bytes.
    void Add(double bytes, double ns, const Entry* entry);
    bool Empty() const { return m_points.empty(); }
    std::size_t Size() const { return m_points.size(); }

    /// The fitted time for \p bytes; nullopt with no visible measurement.  Below the
    /// smallest measurement a line's latency remains; past the largest, the largest ones'
    /// line carries on (their bandwidth), unless they took mostly latency: then the bytes
    /// past them go at the hardware's peak.
    std::optional<double> TimeNs(double bytes, const Hidden& hidden = {}) const;

private:
    struct Point
    {
        double bytes;
        double ns;
        const Entry* entry;
    };
    void Sort() const;

    std::size_t m_neighbours;
    double m_minNsPerByte;
    mutable std::vector<Point> m_points;
    mutable bool m_sorted{true};
};

} // namespace phantora
