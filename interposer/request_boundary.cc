#include "request_boundary.h"

#include "host_time/host_boundary.h"

namespace phantora::interposer
{

namespace
{

template <class... F> struct Overloaded : F...
{
    using F::operator()...;
};
template <class... F> Overloaded(F...) -> Overloaded<F...>;

const char* CollectiveApi(wire::CollectiveOp op)
{
    switch (op)
    {
    case wire::CollectiveOp::AllReduce:
        return "AllReduce";
    case wire::CollectiveOp::AllGather:
        return "AllGather";
    case wire::CollectiveOp::ReduceScatter:
        return "ReduceScatter";
    case wire::CollectiveOp::Broadcast:
        return "Broadcast";
    case wire::CollectiveOp::Reduce:
        return "Reduce";
    case wire::CollectiveOp::AllToAll:
        return "AlltoAll";
    case wire::CollectiveOp::SendRecv:
        // Point-to-point travels as NcclP2P (kSendRecv below); named so no op is left unnamed.
        return "SendRecv";
    }
    return "?";
}

} // namespace

std::optional<std::string> BoundaryOf(const wire::Request& request)
{
    namespace b = host_time::boundary;
    using R = std::optional<std::string>;
    return std::visit(
        Overloaded{
            [](const wire::KernelLaunch& m) -> R
            {
                // The interposer names library calls (cuBLAS, cuBLASLt, cuDNN) by their API.
                const bool library = m.name.rfind("cublas", 0) == 0 || m.name.rfind("cudnn", 0) == 0;
                return library ? b::Library(m.name) : b::Launch(m.name);
            },
            [](const wire::Memcpy& m) -> R
            {
                if (m.kind == wire::CopyKind::Memset)
                {
                    return b::kMemset;
                }
                return m.blocking ? b::kCopySync : b::kCopyAsync;
            },
            [](const wire::Synchronize& m) -> R
            { return m.wholeDevice ? b::kDeviceSync : b::kStreamSync; },
            [](const wire::NcclCommInit&) -> R { return b::kCommInit; },
            [](const wire::NcclCommSplit&) -> R { return b::kCommSplit; },
            [](const wire::NcclCommDestroy&) -> R { return b::kCommDestroy; },
            [](const wire::NcclCollective& m) -> R { return b::Collective(CollectiveApi(m.op)); },
            [](const wire::NcclP2P&) -> R { return b::kSendRecv; },
            [](const wire::EventRecord&) -> R { return b::kEventRecord; },
            [](const wire::StreamWaitEvent&) -> R { return b::kStreamWaitEvent; },
            [](const wire::EventWait& m) -> R { return m.query ? b::kEventQuery : b::kEventSync; },
            [](const wire::EventElapsed&) -> R { return b::kEventElapsed; },
            [](const wire::HostFunction&) -> R { return b::kHostFunction; },
            [](const auto&) -> R { return std::nullopt; },
        },
        request);
}

} // namespace phantora::interposer
