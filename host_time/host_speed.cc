#include "host_speed.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace phantora::host_time
{

namespace
{

int64_t ThreadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Op
{
    virtual ~Op() = default;
    virtual uint64_t Apply(uint64_t x) const = 0;
};
struct Add final : Op
{
    uint64_t Apply(uint64_t x) const override { return x + 0x9e3779b97f4a7c15ull; }
};
struct Mix final : Op
{
    uint64_t Apply(uint64_t x) const override { return (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull; }
};
struct Rot final : Op
{
    uint64_t Apply(uint64_t x) const override { return (x << 13) | (x >> 51); }
};

/// One round: what an eager framework does per operator, in miniature.
uint64_t Round(std::unordered_map<std::string, uint64_t>& table,
               const std::vector<std::unique_ptr<Op>>& ops, uint64_t x)
{
    static const char* kNames[] = {"aten::add", "aten::mul", "aten::linear", "aten::view",
                                   "aten::copy_", "aten::empty", "aten::gelu", "aten::layer_norm"};
    for (int i = 0; i < 16; ++i)
    {
        std::string key = kNames[x % 8];
        key += static_cast<char>('a' + (x >> 8) % 26);
        uint64_t& slot = table[key];
        slot += x;
        auto shape = std::make_unique<std::vector<int64_t>>(2 + x % 3, static_cast<int64_t>(x));
        x = ops[(x >> 3) % ops.size()]->Apply(x ^ slot ^ static_cast<uint64_t>(shape->size()));
        if (x & 1)
        {
            x += shape->front();
        }
    }
    return x;
}

} // namespace

double MeasureHostSpeedNs()
{
    std::unordered_map<std::string, uint64_t> table;
    std::vector<std::unique_ptr<Op>> ops;
    ops.push_back(std::make_unique<Add>());
    ops.push_back(std::make_unique<Mix>());
    ops.push_back(std::make_unique<Rot>());
    constexpr int kRounds = 4000;
    uint64_t x = 1;
    int64_t best = INT64_MAX;
    for (int batch = 0; batch < 9; ++batch)
    {
        const int64_t start = ThreadCpuNs();
        for (int i = 0; i < kRounds; ++i)
        {
            x = Round(table, ops, x);
        }
        best = std::min(best, ThreadCpuNs() - start);
    }
    // Keeps the work observable, so the optimiser cannot drop it.
    volatile uint64_t sink = x;
    (void)sink;
    return static_cast<double>(best) / kRounds;
}

} // namespace phantora::host_time
