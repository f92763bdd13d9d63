#include "dcqcn-rate-control.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DcqcnRateControl");
NS_OBJECT_ENSURE_REGISTERED(DcqcnRateControl);

TypeId DcqcnRateControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DcqcnRateControl")
            .SetParent<Object>()
            .SetGroupName("Phantora")
            .AddConstructor<DcqcnRateControl>()
            .AddAttribute("G", "Gain g of the alpha estimate (paper: 1/256)",
                          DoubleValue(1.0 / 256), MakeDoubleAccessor(&DcqcnRateControl::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("AlphaUpdateInterval",
                          "K: alpha decays once per interval without a CNP (paper: 55 us)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnRateControl::m_alphaInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("RateDecreaseInterval",
                          "At most one rate cut per interval (ConnectX "
                          "rate_reduce_monitor_period: 4 us)",
                          TimeValue(MicroSeconds(4)),
                          MakeTimeAccessor(&DcqcnRateControl::m_decreaseInterval),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("RateIncreaseInterval",
                          "T: period of the rate-increase timer (paper: 55 us)",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&DcqcnRateControl::m_increaseInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("ByteCounter", "B: bytes sent per byte-counter expiry (paper: 10 MB)",
                          UintegerValue(10 * 1000 * 1000),
                          MakeUintegerAccessor(&DcqcnRateControl::m_byteCounter),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("FastRecoverySteps",
                          "F: expiries of fast recovery before additive increase (paper: 5)",
                          UintegerValue(5),
                          MakeUintegerAccessor(&DcqcnRateControl::m_fastRecoverySteps),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RateAI",
                          "R_AI: additive-increase step of the target rate (paper: 40 Mb/s)",
                          DataRateValue(DataRate("40Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rateAi), MakeDataRateChecker())
            .AddAttribute("RateHAI",
                          "R_HAI: hyper-increase step of the target rate (10 R_AI, as ConnectX)",
                          DataRateValue(DataRate("400Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_rateHai), MakeDataRateChecker())
            .AddAttribute("MinRate", "Floor of the current rate (ConnectX: 100 Mb/s)",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&DcqcnRateControl::m_minRate), MakeDataRateChecker())
            .AddAttribute("CnpInterval",
                          "N: a receiver sends at most one CNP per connection per interval "
                          "(paper: 50 us)",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&DcqcnRateControl::m_cnpInterval),
                          MakeTimeChecker(Seconds(0)));
    return tid;
}

DcqcnRateControl::DcqcnRateControl()
{
    NS_LOG_FUNCTION(this);
}

void DcqcnRateControl::Init(DcqcnState& state, DataRate lineRate) const
{
    state.lineRate = static_cast<double>(lineRate.GetBitRate());
    state.currentRate = state.lineRate;
    state.targetRate = state.lineRate;
    state.minRateSeen = state.lineRate;
}

bool DcqcnRateControl::TakeCnpSlot(DcqcnState& state) const
{
    const Time now = Simulator::Now();
    if (!state.lastCnp.IsNegative() && now - state.lastCnp < m_cnpInterval)
    {
        return false;
    }
    state.lastCnp = now;
    return true;
}

void DcqcnRateControl::OnCnp(DcqcnState& state)
{
    ++state.cnpsReceived;
    state.cnpSinceAlphaUpdate = true;
    if (!state.limited)
    {
        // The first CNP after running free: alpha starts over, as ConnectX does.
        state.limited = true;
        state.alpha = 1.0;
        state.cnpSinceAlphaUpdate = false;
        StartTimers(state);
    }
    const Time now = Simulator::Now();
    if (state.lastDecrease.IsNegative() || now - state.lastDecrease >= m_decreaseInterval)
    {
        Decrease(state);
        return;
    }
    if (!state.decreasePending)
    {
        state.decreasePending = true;
        if (state.active)
        {
            state.decreaseTimer =
                Simulator::Schedule(state.lastDecrease + m_decreaseInterval - now,
                                    &DcqcnRateControl::DecreaseTimer, this, &state);
        }
    }
}

void DcqcnRateControl::Decrease(DcqcnState& state)
{
    state.decreasePending = false;
    state.lastDecrease = Simulator::Now();
    state.targetRate = state.currentRate;
    state.currentRate = std::max(static_cast<double>(m_minRate.GetBitRate()),
                                 state.currentRate * (1 - state.alpha / 2));
    state.alpha = (1 - m_g) * state.alpha + m_g;
    state.timeStage = 0;
    state.byteStage = 0;
    state.bytesSinceStage = 0;
    ++state.rateCuts;
    state.minRateSeen = std::min(state.minRateSeen, state.currentRate);
    NS_LOG_LOGIC("cut to " << state.currentRate / 1e9 << " Gb/s, alpha " << state.alpha);
    if (state.active)
    {
        // The increase timer counts from the cut.
        state.increaseTimer.Cancel();
        state.increaseTimer =
            Simulator::Schedule(m_increaseInterval, &DcqcnRateControl::IncreaseTimer, this, &state);
    }
}

void DcqcnRateControl::Increase(DcqcnState& state)
{
    const uint32_t hi = std::max(state.timeStage, state.byteStage);
    const uint32_t lo = std::min(state.timeStage, state.byteStage);
    if (hi >= m_fastRecoverySteps)
    {
        if (lo > m_fastRecoverySteps)
        {
            state.targetRate +=
                (lo - m_fastRecoverySteps) * static_cast<double>(m_rateHai.GetBitRate());
        }
        else
        {
            state.targetRate += static_cast<double>(m_rateAi.GetBitRate());
        }
    }
    state.targetRate = std::min(state.targetRate, state.lineRate);
    state.currentRate = std::min((state.targetRate + state.currentRate) / 2, state.lineRate);
    // Within a part per million of line rate the pacer could not tell the difference:
    // the connection runs free again and needs no timers.
    if (state.currentRate >= state.lineRate * (1 - 1e-6) && state.targetRate >= state.lineRate)
    {
        state.currentRate = state.lineRate;
        state.limited = false;
        state.alphaTimer.Cancel();
        state.increaseTimer.Cancel();
        state.decreaseTimer.Cancel();
        state.decreasePending = false;
    }
}

void DcqcnRateControl::OnSent(DcqcnState& state, uint32_t bytes)
{
    if (!state.limited)
    {
        return;
    }
    const Time now = Simulator::Now();
    state.nextSend =
        std::max(now, state.nextSend) + Seconds(static_cast<double>(bytes) * 8 / state.currentRate);
    state.bytesSinceStage += bytes;
    if (state.bytesSinceStage >= m_byteCounter)
    {
        state.bytesSinceStage -= m_byteCounter;
        ++state.byteStage;
        Increase(state);
    }
}

void DcqcnRateControl::SetActive(DcqcnState& state, bool active)
{
    if (active == state.active)
    {
        return;
    }
    state.active = active;
    if (!active)
    {
        Stop(state);
        return;
    }
    if (state.limited)
    {
        StartTimers(state);
        if (state.decreasePending)
        {
            Decrease(state);
        }
    }
}

void DcqcnRateControl::StartTimers(DcqcnState& state)
{
    if (!state.active)
    {
        return;
    }
    if (!state.alphaTimer.IsRunning())
    {
        state.alphaTimer =
            Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this, &state);
    }
    if (!state.increaseTimer.IsRunning())
    {
        state.increaseTimer =
            Simulator::Schedule(m_increaseInterval, &DcqcnRateControl::IncreaseTimer, this, &state);
    }
}

void DcqcnRateControl::Stop(DcqcnState& state)
{
    state.alphaTimer.Cancel();
    state.increaseTimer.Cancel();
    state.decreaseTimer.Cancel();
}

void DcqcnRateControl::Reset(DcqcnState& state) const
{
    state.alphaTimer.Cancel();
    state.increaseTimer.Cancel();
    state.decreaseTimer.Cancel();
    state.currentRate = state.lineRate;
    state.targetRate = state.lineRate;
    state.alpha = 1;
    state.timeStage = 0;
    state.byteStage = 0;
    state.bytesSinceStage = 0;
    state.cnpSinceAlphaUpdate = false;
    state.decreasePending = false;
    state.limited = false;
    state.active = false;
    state.lastDecrease = Seconds(-1);
    state.nextSend = Time(0);
    state.lastCnp = Seconds(-1);
}

void DcqcnRateControl::AlphaTimer(DcqcnState* state)
{
    if (!state->cnpSinceAlphaUpdate)
    {
        state->alpha *= 1 - m_g;
    }
    state->cnpSinceAlphaUpdate = false;
    state->alphaTimer =
        Simulator::Schedule(m_alphaInterval, &DcqcnRateControl::AlphaTimer, this, state);
}

void DcqcnRateControl::IncreaseTimer(DcqcnState* state)
{
    ++state->timeStage;
    Increase(*state);
    if (state->limited)
    {
        state->increaseTimer =
            Simulator::Schedule(m_increaseInterval, &DcqcnRateControl::IncreaseTimer, this, state);
    }
}

void DcqcnRateControl::DecreaseTimer(DcqcnState* state)
{
    if (state->decreasePending)
    {
        Decrease(*state);
    }
}

} // namespace ns3
