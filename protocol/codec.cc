#include "codec.h"

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <sstream>

namespace phantora::wire
{

namespace
{

// The largest request a rank sends is a kernel name plus a few numbers, or a small
// collective's values; anything bigger is not ours, and refusing it early keeps a hostile
// length prefix from making cereal allocate gigabytes.
constexpr std::size_t kMaxRequestBytes = 1 << 20;
// A reply can be larger: the Welcome carries the host-time and read-back tables (each
// bounded by kMaxHostTableBytes), which for a model of every recorded program or a long
// recording exceed a request's bound by far.  Replies come from the bridge the rank
// connected to with its token or CURVE key.
constexpr std::size_t kMaxReplyBytes = 2 * std::size_t{kMaxHostTableBytes} + kMaxRequestBytes;

template <class Envelope> std::string EncodeEnvelope(const Envelope& m)
{
    std::ostringstream os;
    {
        cereal::PortableBinaryOutputArchive ar(os);
        ar(kMagic, kVersion, m.seq);
        if constexpr (std::is_same_v<Envelope, RequestEnvelope>)
        {
            ar(m.clockNs, m.lane, m.order, m.graphNode);
        }
        ar(m.body);
    }
    return std::move(os).str();
}

template <class Envelope> Envelope DecodeEnvelope(std::string_view bytes, const char* what)
{
    constexpr std::size_t kMaxMessageBytes =
        std::is_same_v<Envelope, RequestEnvelope> ? kMaxRequestBytes : kMaxReplyBytes;
    if (bytes.size() > kMaxMessageBytes)
    {
        throw DecodeError(std::string(what) + " of " + std::to_string(bytes.size()) +
                          " bytes is larger than any phantora message");
    }
    std::istringstream is{std::string(bytes)};
    Envelope m;
    try
    {
        cereal::PortableBinaryInputArchive ar(is);
        uint32_t magic = 0;
        uint16_t version = 0;
        ar(magic);
        if (magic != kMagic)
        {
            throw DecodeError(std::string(what) + " does not start with the phantora magic");
        }
        ar(version);
        if (version != kVersion)
        {
            throw DecodeError(std::string(what) + " has protocol version " +
                              std::to_string(version) + ", expected " + std::to_string(kVersion));
        }
        ar(m.seq);
        if constexpr (std::is_same_v<Envelope, RequestEnvelope>)
        {
            ar(m.clockNs, m.lane, m.order, m.graphNode);
        }
        ar(m.body);
    }
    catch (const DecodeError&)
    {
        throw;
    }
    catch (const std::exception& e)
    {
        throw DecodeError(std::string("malformed ") + what + ": " + e.what());
    }
    if (is.peek() != std::char_traits<char>::eof())
    {
        throw DecodeError(std::string(what) + " has trailing bytes");
    }
    return m;
}

} // namespace

std::string Encode(const RequestEnvelope& m)
{
    return EncodeEnvelope(m);
}
std::string Encode(const ReplyEnvelope& m)
{
    return EncodeEnvelope(m);
}

RequestEnvelope DecodeRequest(std::string_view bytes)
{
    return DecodeEnvelope<RequestEnvelope>(bytes, "request");
}

ReplyEnvelope DecodeReply(std::string_view bytes)
{
    return DecodeEnvelope<ReplyEnvelope>(bytes, "reply");
}

const char* RequestName(const Request& r)
{
    static constexpr const char* kNames[] = {
        "Hello",          "KernelLaunch",     "Memcpy",           "Synchronize", "NcclCommInit",
        "NcclCollective", "NcclCommDestroy",  "Goodbye",          "EventRecord", "StreamWaitEvent",
        "EventWait",      "EventElapsed",     "NcclCommSplit",    "NcclP2P",     "HostEvent",
        "HostFunction",   "HostFunctionDone", "CollectiveValues", "Watch",       "P2PValues"};
    static_assert(std::size(kNames) == std::variant_size_v<Request>);
    return kNames[r.index()];
}

} // namespace phantora::wire
