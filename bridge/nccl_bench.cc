#include "nccl_bench.h"

#include "network_model.h"
#include "ns3/nccl-plan.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace phantora
{

std::optional<ns3::NcclCollectiveKind> ParseCollectiveKind(std::string_view name)
{
    using K = ns3::NcclCollectiveKind;
    for (K k : {K::AllReduce, K::AllGather, K::ReduceScatter, K::Broadcast, K::Reduce, K::AllToAll,
                K::SendRecv})
    {
        if (name == ns3::NcclCollectiveName(k))
        {
            return k;
        }
    }
    return std::nullopt;
}

double BusBandwidthFactor(ns3::NcclCollectiveKind kind, uint32_t nRanks)
{
    const double n = nRanks;
    switch (kind)
    {
    case ns3::NcclCollectiveKind::AllReduce:
        return 2.0 * (n - 1) / n;
    case ns3::NcclCollectiveKind::AllGather:
    case ns3::NcclCollectiveKind::ReduceScatter:
    case ns3::NcclCollectiveKind::AllToAll:
        return (n - 1) / n;
    default:
        return 1.0;
    }
}

BenchResult BenchCollective(const Scenario& scenario, ns3::NcclCollectiveKind kind, uint32_t nRanks,
                            uint64_t bytes, uint32_t iters)
{
    if (nRanks == 0 || nRanks > scenario.topology.gpus)
    {
        throw std::invalid_argument("the scenario has " + std::to_string(scenario.topology.gpus) +
                                    " GPUs; asked for " + std::to_string(nRanks));
    }
    NetworkModel network(scenario);
    ns3::NcclCommShape shape;
    shape.nRanks = nRanks;
    shape.ranksPerNode = std::min(nRanks, std::max(scenario.topology.gpusPerNode, 1U));
    const ns3::NcclChoice choice = ns3::ChooseNccl(kind, shape, bytes, scenario.nccl);
    std::vector<uint32_t> gpus(nRanks);
    for (uint32_t i = 0; i < nRanks; ++i)
    {
        gpus[i] = i;
    }
    BenchResult result;
    result.algorithm = ns3::NcclAlgorithmName(choice.algorithm);
    result.protocol = ns3::NcclProtocolName(choice.protocol);
    result.nChannels = choice.nChannels;
    const int64_t start = network.NowNs();
    int64_t end = start;
    for (uint32_t it = 0; it < std::max(iters, 1U); ++it)
    {
        ns3::NcclPlan plan = ns3::MakeNcclPlan(kind, shape, bytes, scenario.nccl, choice);
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
