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

// Each message kind's largest encoding, from what it carries: its fixed fields and the
// bounds of its strings and vectors (messages.h).  A message longer than its kind's bound
// is refused before cereal allocates anything for it, so a hostile length prefix cannot
// make the decoder allocate more than the largest legitimate message of that kind.  The
// bounds are exact (codec_test.cc encodes the largest message of each kind).
constexpr std::size_t kArchiveFlag = 1; // portable binary's endianness byte
constexpr std::size_t kRequestHeader = kArchiveFlag + 4 + 2 + 8 + 8 + 4 + 8 + 1 + 4;
constexpr std::size_t kReplyHeader = kArchiveFlag + 4 + 2 + 8 + 4;
constexpr std::size_t String(std::size_t max = kMaxStringBytes)
{
    return 4 + max;
}
constexpr std::size_t kEnvironment = 5 * String(); // nccl::Environment's five variables
constexpr std::size_t kP2POpFixed = 4 + 8 + 1 + 1 + 4;

// Request kinds, in Request's order.
constexpr std::size_t kRequestBodies[] = {
    5 * String() + 24,                                              // Hello
    3 * String() + 36,                                              // KernelLaunch
    19,                                                             // Memcpy
    9,                                                              // Synchronize
    kNcclIdBytes + 8 + kEnvironment,                                // NcclCommInit
    32 + String(kMaxValueBytes),                                    // NcclCollective
    8,                                                              // NcclCommDestroy
    8 + 112,                                                        // Goodbye
    16,                                                             // EventRecord
    16,                                                             // StreamWaitEvent
    9,                                                              // EventWait
    16,                                                             // EventElapsed
    16 + kEnvironment,                                              // NcclCommSplit
    20 + std::size_t{kMaxP2POps} * kP2POpFixed + kMaxP2PValueBytes, // NcclP2P
    13,                                                             // HostEvent
    16,                                                             // HostFunction
    8,                                                              // HostFunctionDone
    16,                                                             // CollectiveValues
    5 * String() + 14,                                              // Watch
    20,                                                             // P2PValues
    9,                                                              // TableChunk
};
static_assert(std::size(kRequestBodies) == std::variant_size_v<Request>,
              "a new request kind needs its bound here");

// Reply kinds, in Reply's order.
constexpr std::size_t kReplyBodies[] = {
    String() + 76,               // Welcome
    8,                           // Resume
    24,                          // CommReady
    String(),                    // Failure
    1,                           // QueryAnswer
    9,                           // Elapsed
    9 + String(kMaxValueBytes),  // CollectiveResult
    1 + String(),                // SupervisorNote
    String(kMaxTableChunkBytes), // TableData
};
static_assert(std::size(kReplyBodies) == std::variant_size_v<Reply>,
              "a new reply kind needs its bound here");

template <std::size_t N> constexpr std::size_t Largest(const std::size_t (&bodies)[N])
{
    std::size_t most = 0;
    for (std::size_t b : bodies)
    {
        most = b > most ? b : most;
    }
    return most;
}
constexpr std::size_t kMaxRequestBytes = kRequestHeader + Largest(kRequestBodies);
constexpr std::size_t kMaxReplyBytes = kReplyHeader + Largest(kReplyBodies);

constexpr const char* kRequestNames[] = {
    "Hello",          "KernelLaunch",     "Memcpy",           "Synchronize", "NcclCommInit",
    "NcclCollective", "NcclCommDestroy",  "Goodbye",          "EventRecord", "StreamWaitEvent",
    "EventWait",      "EventElapsed",     "NcclCommSplit",    "NcclP2P",     "HostEvent",
    "HostFunction",   "HostFunctionDone", "CollectiveValues", "Watch",       "P2PValues",
    "TableChunk"};
static_assert(std::size(kRequestNames) == std::variant_size_v<Request>);
constexpr const char* kReplyNames[] = {"Welcome",          "Resume",         "CommReady",
                                       "Failure",          "QueryAnswer",    "Elapsed",
                                       "CollectiveResult", "SupervisorNote", "TableData"};
static_assert(std::size(kReplyNames) == std::variant_size_v<Reply>);

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
    constexpr bool kRequest = std::is_same_v<Envelope, RequestEnvelope>;
    constexpr std::size_t kMaxMessageBytes = kRequest ? kMaxRequestBytes : kMaxReplyBytes;
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
        if constexpr (kRequest)
        {
            ar(m.clockNs, m.lane, m.order, m.graphNode);
        }
        // The kind (cereal's variant index, a little-endian int32) decides the bound.
        const auto at = static_cast<std::size_t>(is.tellg());
        if (at + 4 <= bytes.size())
        {
            const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
            const uint32_t kind = p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24;
            const std::size_t kinds =
                kRequest ? std::size(kRequestBodies) : std::size(kReplyBodies);
            if (kind < kinds)
            {
                const std::size_t bound = kRequest ? kRequestHeader + kRequestBodies[kind]
                                                   : kReplyHeader + kReplyBodies[kind];
                if (bytes.size() > bound)
                {
                    throw DecodeError(std::string(what) + " " +
                                      (kRequest ? kRequestNames[kind] : kReplyNames[kind]) +
                                      " of " + std::to_string(bytes.size()) +
                                      " bytes is larger than that kind's " + std::to_string(bound) +
                                      "-byte bound");
                }
            }
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

std::size_t MaxRequestBytes(std::size_t kind)
{
    return kind < std::size(kRequestBodies) ? kRequestHeader + kRequestBodies[kind] : 0;
}

std::size_t MaxReplyBytes(std::size_t kind)
{
    return kind < std::size(kReplyBodies) ? kReplyHeader + kReplyBodies[kind] : 0;
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
    return kRequestNames[r.index()];
}

} // namespace phantora::wire
