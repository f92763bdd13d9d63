#ifndef DCQCN_RATE_CONTROL_H
#define DCQCN_RATE_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup phantora
 * \brief The DCQCN state of one RoCE connection (one queue pair, here one ordered GPU
 * pair): reaction point at the sender, notification point at the receiver.
 */
struct DcqcnState
{
    double lineRate{0};    ///< bits/s of the sender's RoCE port
    double currentRate{0}; ///< Rc
    double targetRate{0};  ///< Rt
    double alpha{1};
    uint32_t timeStage{0};       ///< rate-increase timer expiries since the last cut
    uint32_t byteStage{0};       ///< byte-counter expiries since the last cut
    uint64_t bytesSinceStage{0}; ///< bytes sent towards the next byte-counter expiry
    bool cnpSinceAlphaUpdate{false};
    bool decreasePending{false};
    bool limited{false}; ///< cut at least once and not yet back at line rate
    bool active{false};  ///< has flows sending: timers run only then
    Time lastDecrease{Seconds(-1)};
    Time nextSend{0};          ///< pacing: earliest start of the connection's next packet
    Time lastCnp{Seconds(-1)}; ///< notification point: when it last sent a CNP
    EventId alphaTimer;
    EventId increaseTimer;
    EventId decreaseTimer;
    uint64_t cnpsReceived{0};
    uint64_t rateCuts{0};
    double minRateSeen{0};
};

/**
 * \ingroup phantora
 * \brief DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015), as ConnectX NICs run it: the parameters, and the reaction to CNPs,
 * timers and sent bytes on a DcqcnState.
 *
 * - A CNP cuts the rate at most once per RateDecreaseInterval (later CNPs of the same
 *   interval are folded into one cut at its end): Rt = Rc, Rc = Rc (1 - alpha/2),
 *   alpha = (1 - g) alpha + g; the increase stages restart.
 * - Every AlphaUpdateInterval without a CNP, alpha = (1 - g) alpha.
 * - The rate-increase timer (every RateIncreaseInterval) and the byte counter (every
 *   ByteCounter bytes sent) each advance a stage count; after each expiry, with
 *   i = max and j = min of the two counts: i < F gives fast recovery, Rc = (Rt + Rc)/2;
 *   j > F hyper increase, Rt += (j - F) RateHAI; otherwise additive increase,
 *   Rt += RateAI; both then set Rc = (Rt + Rc)/2.
 * - Back at line rate the connection leaves DCQCN's control and its timers stop, as
 *   does a connection with nothing to send; so a lone, uncongested flow never meets a
 *   timer, a rate limit or an extra event.
 *
 * Defaults are the paper's (g, K, T, B, F, R_AI, CNP interval N) and ConnectX's for what
 * the paper leaves open (rate-reduce monitor period 4 us, minimum rate 100 Mb/s).
 */
class DcqcnRateControl : public Object
{
public:
    static TypeId GetTypeId();
    DcqcnRateControl();

    /// A connection of a sender whose RoCE port runs at \p lineRate, at full rate.
    void Init(DcqcnState& state, DataRate lineRate) const;
    /// A CNP reached the sender.
    void OnCnp(DcqcnState& state);
    /// The sender put \p bytes of the connection on the wire: pacing and byte counter.
    void OnSent(DcqcnState& state, uint32_t bytes);
    /// The connection gets (\p active) or loses its last flow: timers run only while active.
    void SetActive(DcqcnState& state, bool active);
    /// Cancels the connection's timers for good.
    void Stop(DcqcnState& state);
    /// Back to line rate and alpha 1 with no timers, as a fresh connection; counters stay.
    void Reset(DcqcnState& state) const;
    /// Notification point: whether a marked packet arriving now may trigger a CNP.
    bool TakeCnpSlot(DcqcnState& state) const;

    /// Wire size of a CNP (an RoCEv2 BTH + ICRC minimum frame).
    static constexpr uint32_t CNP_BYTES = 64;

private:
    void Decrease(DcqcnState& state);
    void Increase(DcqcnState& state);
    void AlphaTimer(DcqcnState* state);
    void IncreaseTimer(DcqcnState* state);
    void DecreaseTimer(DcqcnState* state);
    void StartTimers(DcqcnState& state);

    double m_g{1.0 / 256};
    Time m_alphaInterval;
    Time m_decreaseInterval;
    Time m_increaseInterval;
    uint64_t m_byteCounter{0};
    uint32_t m_fastRecoverySteps{5};
    DataRate m_rateAi;
    DataRate m_rateHai;
    DataRate m_minRate;
    Time m_cnpInterval;
};

} // namespace ns3

#endif
