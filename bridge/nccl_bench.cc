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
                            uint64_t bytes, uint32_t iters)
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
    BenchResult result;
    result.algorithm = nccl::AlgorithmName(choice.algorithm);
    result.protocol = nccl::ProtocolName(choice.protocol);
    result.nChannels = choice.nChannels;
    const int64_t start = network.NowNs();
    int64_t end = start;
    for (uint32_t it = 0; it < std::max(iters, 1U); ++it)
    {
        nccl::Plan plan = nccl::MakePlan(kind, shape, bytes, scenario.nccl, choice);
        result.algorithm = plan.algorithm;
        result.transfers = plan.transfers.size();
        bool done = false;
        network.StartCollective(end, std::move(plan), gpus,
                                [&](int64_t endNs)
                                {
                                    end = endNs;
                                    done = true;
                                });
        while (!done)
        {
            if (!network.Busy())
            {
                throw std::logic_error("the network went idle before the collective completed");
            }
            network.RunUntil(NetworkModel::kForever);
        }
    }
    result.timeUs = static_cast<double>(end - start) / 1e3 / std::max(iters, 1U);
    return result;
}

} // namespace phantora
