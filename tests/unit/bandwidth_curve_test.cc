// Time against bytes: the line (latency plus bytes at a bandwidth) through the nearest
// measurements (bandwidth_curve.h).
#include "gpu_model/bandwidth_curve.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

using namespace phantora;

namespace
{
// 1 us of latency and 1 byte a ns (1 GB/s), measured exactly at five sizes
std::vector<BandwidthCurve::Entry> Entries(int n)
{
    std::vector<BandwidthCurve::Entry> out;
    for (int i = 0; i < n; ++i)
    {
        profile::OpKey k = profile::KeyForCopy("HtoD", uint64_t(1000) << (2 * i));
        out.emplace_back(k, profile::OpStats{});
    }
    return out;
}
} // namespace

TEST(BandwidthCurve, TheLineThroughTheNearestMeasurementsCarriesLatencyAndBandwidth)
{
    const auto entries = Entries(5);
    BandwidthCurve c(3);
    for (const auto& e : entries)
    {
        const double b = static_cast<double>(e.first.bytes);
        c.Add(b, 1000 + b, &e);
    }
    EXPECT_NEAR(*c.TimeNs(5000), 6000, 1e-6);
    // past the largest (256 kB): the same line, not its own rate (1 GB/s vs 0.996)
    EXPECT_NEAR(*c.TimeNs(1e9), 1000 + 1e9, 1e-3);
    // below the smallest: the latency remains
    EXPECT_NEAR(*c.TimeNs(1), 1001, 1e-6);
    // what the hidden measurements do not say, the others still do
    EXPECT_NEAR(*c.TimeNs(5000, [&](const auto& e) { return &e == &entries[1]; }), 6000, 1e-6);
    EXPECT_FALSE(c.TimeNs(5000, [](const auto&) { return true; }));
}

TEST(BandwidthCurve, NoLineIsFasterThanTheHardware)
{
    const auto entries = Entries(3);
    // measured times that do not grow (1, 4 and 16 kB in 2 us): all latency
    BandwidthCurve c(4, 1e12);
    for (const auto& e : entries)
    {
        c.Add(static_cast<double>(e.first.bytes), 2000, &e);
    }
    EXPECT_NEAR(*c.TimeNs(4000), 2000, 10);
    // far past them the extra bytes go at the peak (1 TB/s here), not free
    const double largest = 16000;
    EXPECT_NEAR(*c.TimeNs(1e9), *c.TimeNs(largest) + (1e9 - largest) * 1e-3, 1e-6);
    EXPECT_GT(*c.TimeNs(1e9), 1e6);
}
