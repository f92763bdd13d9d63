#include "nccl_bench.h"

#include "nccl/plan.h"
#include "network_model.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace phantora
{

std::optional<nccl::CollectiveKind> ParseCollectiveKind(std::string_view name)
{
    using K = nccl::CollectiveKind;
    for (K k : {K::AllReduce, K::AllGather, K::ReduceScatter, K::Broadcast, K::Reduce, K::AllToAll,
                K::SendRecv})
    {
        if (name == nccl::CollectiveName(k))
        {
            return k;
        }
    }
    return std::nullopt;
}

double BusBandwidthFactor(nccl::CollectiveKind kind, uint32_t nRanks)
{
    const double n = nRanks;
    switch (kind)
    {
    case nccl::CollectiveKind::AllReduce:
        return 2.0 * (n - 1) / n;
    case nccl::CollectiveKind::AllGather:
    case nccl::CollectiveKind::ReduceScatter:
    case nccl::CollectiveKind::AllToAll:
        return (n - 1) / n;
    default:
        return 1.0;
    }
}

BenchResult BenchCollective(const Scenario& scenario, nccl::CollectiveKind kind, uint32_t nRanks,
                            uint64_t bytes, uint32_t itersAsked)
{
    if (nRanks == 0 || nRanks > scenario.topology.gpus)
    {
        throw std::invalid_argument("the scenario has " + std::to_string(scenario.topology.gpus) +
                                    " GPUs; asked for " + std::to_string(nRanks));
    }
    NetworkModel network(scenario);
    nccl::CommShape shape;
    shape.nRanks = nRanks;
    shape.ranksPerNode = std::min(nRanks, std::max(scenario.topology.gpusPerNode, 1U));
    const nccl::Choice choice = nccl::Choose(kind, shape, bytes, scenario.nccl);
    std::vector<uint32_t> gpus(nRanks);
    for (uint32_t i = 0; i < nRanks; ++i)
    {
        gpus[i] = i;
    }
    const uint32_t iters = std::max(itersAsked, 1U);
    nccl::Plan one = nccl::MakePlan(kind, shape, bytes, scenario.nccl, choice);
    BenchResult result;
    result.algorithm = one.algorithm;
    result.protocol = nccl::ProtocolName(choice.protocol);
    result.nChannels = choice.nChannels;
    result.transfers = one.transfers.size();
    const std::size_t fit = kBenchTransferBudget / std::max<std::size_t>(one.transfers.size(), 1);
    const auto calls =
        static_cast<uint32_t>(std::clamp<std::size_t>(fit, std::min(iters, 2U), iters));
    const int64_t start = network.NowNs();
    std::vector<std::vector<int64_t>> ends;
    bool done = false;
    network.StartCollective(start, nccl::BackToBack(one, calls), gpus,
                            NetworkModel::CompletionFn(
                                [&](const NetworkModel::Completion& c)
                                {
                                    ends = c.rankEndNs;
                                    done = true;
                                }));
    while (!done)
    {
        if (!network.Busy())
        {
            throw std::logic_error("the network went idle before the collective completed");
        }
        network.RunUntil(NetworkModel::kForever);
    }
    // Each rank's end of call `iters`: simulated, or its steady gap between the first and
    // the last simulated call carried on.
    double slowest = 0;
    for (std::size_t r = 0; r < ends.back().size(); ++r)
    {
        const double first = static_cast<double>(ends.front()[r] - start);
        const double last = static_cast<double>(ends.back()[r] - start);
        const double gap = calls > 1 ? (last - first) / (calls - 1) : 0.0;
        slowest = std::max(slowest, first + gap * (iters - 1));
    }
    result.timeUs = slowest / 1e3 / iters;
    return result;
}

} // namespace phantora
