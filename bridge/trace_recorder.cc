#include "trace_recorder.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

namespace phantora
{

void TraceRecorder::Span(int rank, std::string track, std::string name, int64_t startNs,
                         int64_t endNs)
{
    m_spans.push_back({rank, std::move(track), std::move(name), startNs, endNs});
}

void TraceRecorder::NetworkSpan(std::string track, std::string name, int64_t startNs,
                                int64_t endNs)
{
    m_spans.push_back({kNetworkPid, std::move(track), std::move(name), startNs, endNs});
}

void TraceRecorder::MarkIncomplete(std::string end, std::string reason, int64_t atNs)
{
    m_incomplete = Incomplete{std::move(end), std::move(reason), atNs};
}

void TraceRecorder::Write(const std::filesystem::path& file) const
{
    // Spans arrive in the order the bridge happened to learn of them; sort them so the
    // file depends on the simulated timeline only.
    std::vector<const Entry*> order;
    order.reserve(m_spans.size());
    for (const auto& e : m_spans)
    {
        order.push_back(&e);
    }
    std::sort(order.begin(), order.end(),
              [](const Entry* a, const Entry* b)
              {
                  return std::tie(a->rank, a->track, a->startNs, a->endNs, a->name) <
                         std::tie(b->rank, b->track, b->startNs, b->endNs, b->name);
              });
    std::map<std::pair<int, std::string>, int> tids; // "cpu" sorts before "stream ..."
    for (const Entry* e : order)
    {
        tids.try_emplace({e->rank, e->track}, 0);
    }
    int lastRank = -1;
    int next = 0;
    for (auto& [key, tid] : tids)
    {
        next = key.first == lastRank ? next + 1 : 0;
        lastRank = key.first;
        tid = next;
    }

    auto us = [](int64_t ns)
    { return nlohmann::json::number_float_t(static_cast<double>(ns) / 1000.0); };
    nlohmann::json events = nlohmann::json::array();
    int namedRank = -1;
    for (const auto& [key, tid] : tids)
    {
        if (key.first != namedRank)
        {
            namedRank = key.first;
            events.push_back({{"ph", "M"},
                              {"name", "process_name"},
                              {"pid", key.first},
                              {"args",
                               {{"name", key.first == kNetworkPid
                                             ? std::string("network")
                                             : fmt::format("rank {}", key.first)}}}});
        }
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", key.first},
                          {"tid", tid},
                          {"args", {{"name", key.second}}}});
    }
    for (const Entry* e : order)
    {
        events.push_back({{"ph", "X"},
                          {"name", e->name},
                          {"pid", e->rank},
                          {"tid", tids.at({e->rank, e->track})},
                          {"ts", us(e->startNs)},
                          {"dur", us(e->endNs - e->startNs)}});
    }
    nlohmann::json metadata = {{"complete", !m_incomplete}};
    if (m_incomplete)
    {
        metadata["end"] = m_incomplete->end;
        metadata["incomplete_reason"] = m_incomplete->reason;
        // a global instant marker, so the viewer shows where the simulation stopped
        events.push_back({{"ph", "i"},
                          {"s", "g"},
                          {"name", "simulation ended early: " + m_incomplete->end},
                          {"pid", 0},
                          {"tid", 0},
                          {"ts", us(m_incomplete->atNs)},
                          {"args", {{"reason", m_incomplete->reason}}}});
    }
    std::ofstream out(file);
    if (!out)
    {
        throw std::runtime_error(fmt::format("cannot write the trace to {}", file.string()));
    }
    out << nlohmann::json{{"displayTimeUnit", "ns"},
                          {"metadata", metadata},
                          {"traceEvents", events}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
}

} // namespace phantora
