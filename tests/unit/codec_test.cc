#include "protocol/codec.h"

#include <gtest/gtest.h>
#include <random>

using namespace phantora::wire;

namespace
{

template <class T> T RoundTripRequest(const T& body)
{
    RequestEnvelope in;
    in.seq = 42;
    in.clockNs = 123456789;
    in.body = body;
    const RequestEnvelope out = DecodeRequest(Encode(in));
    EXPECT_EQ(out.seq, 42U);
    EXPECT_EQ(out.clockNs, 123456789);
    EXPECT_TRUE(std::holds_alternative<T>(out.body));
    return std::get<T>(out.body);
}

} // namespace

TEST(Codec, RequestsRoundTrip)
{
    Hello h{"tok", 3, 8, 3, 999, "hostb:1234"};
    const Hello h2 = RoundTripRequest(h);
    EXPECT_EQ(h2.token, "tok");
    EXPECT_EQ(h2.rank, 3);
    EXPECT_EQ(h2.worldSize, 8);
    EXPECT_EQ(h2.pid, 999);
    EXPECT_EQ(h2.supervisor, "hostb:1234");

    Watch w;
    w.id = "hostb:1234";
    w.host = "hostb";
    w.pid = 1234;
    w.rank = 2;
    w.commandPid = 1240;
    w.command = "torchrun";
    w.exited = true;
    w.exitMessage = "was killed by signal 9 (Killed)";
    const Watch w2 = RoundTripRequest(w);
    EXPECT_EQ(w2.id, w.id);
    EXPECT_EQ(w2.host, "hostb");
    EXPECT_EQ(w2.pid, 1234);
    EXPECT_EQ(w2.rank, 2);
    EXPECT_EQ(w2.commandPid, 1240);
    EXPECT_EQ(w2.command, "torchrun");
    EXPECT_TRUE(w2.exited);
    EXPECT_FALSE(w2.clean);
    EXPECT_EQ(w2.exitMessage, w.exitMessage);

    KernelLaunch k{0x1010, "step(float*, int)", {1024, 2, 1},     {256, 1, 1},
                   4096,   "1=32000",           "elements=135636"};
    const KernelLaunch k2 = RoundTripRequest(k);
    EXPECT_EQ(k2.stream, 0x1010U);
    EXPECT_EQ(k2.name, k.name);
    EXPECT_EQ(k2.args, "1=32000");
    EXPECT_EQ(k2.work, "elements=135636");
    EXPECT_EQ(k2.grid, k.grid);
    EXPECT_EQ(k2.block, k.block);
    EXPECT_EQ(k2.sharedMem, 4096U);

    const Memcpy m2 = RoundTripRequest(Memcpy{7, CopyKind::DeviceToHost, 1ULL << 33, true});
    EXPECT_EQ(m2.kind, CopyKind::DeviceToHost);
    EXPECT_EQ(m2.bytes, 1ULL << 33);
    EXPECT_TRUE(m2.blocking);

    NcclCommInit init;
    for (std::size_t i = 0; i < init.id.size(); ++i)
    {
        init.id[i] = static_cast<uint8_t>(i * 7);
    }
    init.nranks = 4;
    init.rank = 2;
    init.tuning = {"allreduce:tree", "^LL128", "2", "8", "0"};
    const NcclCommInit init2 = RoundTripRequest(init);
    EXPECT_EQ(init2.id, init.id);
    EXPECT_EQ(init2.rank, 2);
    EXPECT_TRUE(init2.tuning == init.tuning) << "NCCL's variables travel as the rank had them";

    const NcclCommSplit split2 = RoundTripRequest(NcclCommSplit{7, 1, 3, {"", "LL", "", "", "2"}});
    EXPECT_EQ(split2.parent, 7U);
    EXPECT_EQ(split2.key, 3);
    EXPECT_EQ(split2.tuning.proto, "LL");
    EXPECT_EQ(split2.tuning.nvlsEnable, "2");
    EXPECT_TRUE(split2.tuning.algo.empty() && split2.tuning.maxChannels.empty());

    const NcclCollective c2 = RoundTripRequest(NcclCollective{
        5, CollectiveOp::AllReduce, 1 << 20, 9, 0, DataType::Uint8, RedOp::Sum, false, ""});
    EXPECT_EQ(c2.comm, 5U);
    EXPECT_EQ(c2.bytes, 1U << 20);
    EXPECT_EQ(c2.stream, 9U);

    NcclCollective cv{
        6,    CollectiveOp::ReduceScatter,     16, 9, 1, DataType::Bfloat16, RedOp::Max,
        true, std::string("\0\x01\x02\xff", 4)};
    const NcclCollective cv2 = RoundTripRequest(cv);
    EXPECT_EQ(cv2.op, CollectiveOp::ReduceScatter);
    EXPECT_EQ(cv2.root, 1);
    EXPECT_EQ(cv2.dataType, DataType::Bfloat16);
    EXPECT_EQ(cv2.redOp, RedOp::Max);
    EXPECT_TRUE(cv2.hasValues);
    EXPECT_EQ(cv2.values, cv.values);
    EXPECT_FALSE(c2.hasValues);

    const CollectiveValues q2 = RoundTripRequest(CollectiveValues{5, 1ULL << 40});
    EXPECT_EQ(q2.comm, 5U);
    EXPECT_EQ(q2.sequence, 1ULL << 40);

    EXPECT_TRUE(RoundTripRequest(Synchronize{true, 0}).wholeDevice);
    EXPECT_EQ(RoundTripRequest(Goodbye{77}).peakDeviceBytes, 77U);
    EXPECT_EQ(RoundTripRequest(NcclCommDestroy{3}).comm, 3U);

    NcclP2P p{4, 0x1010, {{1, 1 << 20, true}, {3, 5, false}, {2, 4, true, true, "ab\0c"}}};
    p.ops[2].values = std::string("ab\0c", 4);
    NcclP2P p2 = RoundTripRequest(p);
    ASSERT_EQ(p2.ops.size(), 3U);
    EXPECT_TRUE(p2.ops[2].hasValues);
    EXPECT_EQ(p2.ops[2].values, p.ops[2].values);
    EXPECT_FALSE(p2.ops[0].hasValues);
    p2.ops.pop_back();

    const P2PValues pv = RoundTripRequest(P2PValues{5, 3, 1ULL << 40});
    EXPECT_EQ(pv.comm, 5U);
    EXPECT_EQ(pv.peer, 3);
    EXPECT_EQ(pv.sequence, 1ULL << 40);
    ASSERT_EQ(p2.ops.size(), 2U);
    EXPECT_EQ(p2.comm, 4U);
    EXPECT_EQ(p2.stream, 0x1010U);
    EXPECT_EQ(p2.ops[0].peer, 1);
    EXPECT_EQ(p2.ops[0].bytes, 1U << 20);
    EXPECT_TRUE(p2.ops[0].send);
    EXPECT_EQ(p2.ops[1].peer, 3);
    EXPECT_FALSE(p2.ops[1].send);

    const HostEvent e2 = RoundTripRequest(HostEvent{HostEventKind::Born, 7, 99});
    EXPECT_EQ(e2.kind, HostEventKind::Born);
    EXPECT_EQ(e2.lane, 7U);
    EXPECT_EQ(e2.atNs, 99);
}

TEST(Codec, EnvelopeCarriesLaneAndOrder)
{
    RequestEnvelope in{8, 9, Goodbye{}};
    in.lane = 3;
    in.order = (1ULL << 40) + 5;
    const RequestEnvelope out = DecodeRequest(Encode(in));
    EXPECT_EQ(out.lane, 3U);
    EXPECT_EQ(out.order, (1ULL << 40) + 5);
}

TEST(Codec, RejectsAnOversizedOpList)
{
    // A length prefix past kMaxP2POps must be refused before anything is allocated.
    NcclP2P p{1, 2, {{0, 1, true}}};
    std::string bytes = Encode(RequestEnvelope{1, 2, p});
    const std::string one = Encode(RequestEnvelope{1, 2, NcclP2P{1, 2, {}}});
    // the count is the last 4 bytes of the empty list's encoding
    const std::size_t at = one.size() - 4;
    bytes[at] = bytes[at + 1] = bytes[at + 2] = bytes[at + 3] = static_cast<char>(0x7f);
    EXPECT_THROW(DecodeRequest(bytes), DecodeError);
}

TEST(Codec, RepliesRoundTrip)
{
    Welcome w;
    w.gpuName = "NVIDIA H200";
    w.gpuMemoryBytes = 150754820096ULL;
    w.deviceCount = 8;
    w.cpuTimeScale = 0.5;
    const ReplyEnvelope out = DecodeReply(Encode(ReplyEnvelope{9, w}));
    EXPECT_EQ(out.seq, 9U);
    const auto& w2 = std::get<Welcome>(out.body);
    EXPECT_EQ(w2.gpuName, "NVIDIA H200");
    EXPECT_EQ(w2.gpuMemoryBytes, 150754820096ULL);
    EXPECT_EQ(w2.deviceCount, 8);
    EXPECT_DOUBLE_EQ(w2.cpuTimeScale, 0.5);
    EXPECT_EQ(std::get<Resume>(DecodeReply(Encode(ReplyEnvelope{1, Resume{-5}})).body).clockNs, -5);
    EXPECT_EQ(std::get<Failure>(DecodeReply(Encode(ReplyEnvelope{1, Failure{"no"}})).body).message,
              "no");
    const auto note = std::get<SupervisorNote>(
        DecodeReply(Encode(ReplyEnvelope{3, SupervisorNote{SupervisorNote::State::Failed, "why"}}))
            .body);
    EXPECT_EQ(note.state, SupervisorNote::State::Failed);
    EXPECT_EQ(note.message, "why");
    const std::string bytes(kMaxValueBytes, '\x5a');
    const auto r = std::get<CollectiveResult>(
        DecodeReply(Encode(ReplyEnvelope{2, CollectiveResult{true, bytes}})).body);
    EXPECT_TRUE(r.known);
    EXPECT_EQ(r.values, bytes);
    EXPECT_FALSE(
        std::get<CollectiveResult>(DecodeReply(Encode(ReplyEnvelope{2, CollectiveResult{}})).body)
            .known);
}

TEST(Codec, RefusesValuesPastTheBound)
{
    NcclCollective c{1, CollectiveOp::AllGather, 8, 2, 0, DataType::Uint8, RedOp::Sum, false, ""};
    c.hasValues = true;
    c.values.assign(kMaxValueBytes + 1, 'x');
    EXPECT_THROW(Encode(RequestEnvelope{1, 2, c}), StringTooLong);
    EXPECT_THROW(Encode(ReplyEnvelope{1, CollectiveResult{true, c.values}}), StringTooLong);
    // A length prefix past the bound is refused while decoding, before allocating.
    c.values.assign(4, 'y');
    std::string bytes = Encode(RequestEnvelope{1, 2, c});
    const std::size_t at = bytes.size() - 8; // the 4-byte length before the 4 value bytes
    bytes[at] = bytes[at + 1] = bytes[at + 2] = static_cast<char>(0x7f);
    EXPECT_THROW(DecodeRequest(bytes), DecodeError);
}

TEST(Codec, RejectsForeignAndTruncatedBytes)
{
    EXPECT_THROW(DecodeRequest("GET / HTTP/1.1\r\n\r\n"), DecodeError);
    EXPECT_THROW(DecodeRequest(""), DecodeError);
    const std::string good = Encode(RequestEnvelope{1, 2, KernelLaunch{1, "k", {}, {}, 0, ""}});
    for (std::size_t cut = 0; cut < good.size(); ++cut)
    {
        EXPECT_THROW(DecodeRequest(good.substr(0, cut)), DecodeError) << "cut at " << cut;
    }
    EXPECT_THROW(DecodeRequest(good + "x"), DecodeError);
    // a reply is not a request: the envelope differs
    EXPECT_THROW(DecodeReply(good), DecodeError);
}

TEST(Codec, RejectsAnotherProtocolVersion)
{
    std::string bytes = Encode(RequestEnvelope{1, 2, Goodbye{}});
    // portable binary: one endianness byte, the 4-byte magic, then the version
    bytes[5] = static_cast<char>(kVersion + 1);
    try
    {
        DecodeRequest(bytes);
        FAIL() << "accepted a message of another version";
    }
    catch (const DecodeError& e)
    {
        EXPECT_NE(std::string(e.what()).find("version"), std::string::npos) << e.what();
    }
}

TEST(Codec, BoundedRandomBytesNeverCrash)
{
    // A bounded fuzz of the decoder: random mutations of valid messages must either
    // decode or throw DecodeError, nothing else.
    std::mt19937_64 rng(12345);
    const std::string seeds[] = {
        Encode(
            RequestEnvelope{1, 2, KernelLaunch{1, "kernel_name", {1, 2, 3}, {4, 5, 6}, 7, "0=1"}}),
        Encode(RequestEnvelope{3, 4, NcclCommInit{}}),
        Encode(RequestEnvelope{5, 6, Hello{"token", 1, 2, 3, 4, ""}}),
        Encode(RequestEnvelope{7, 8, NcclP2P{1, 2, {{0, 1, true}, {2, 3, false}}}}),
        Encode(RequestEnvelope{9, 10, HostEvent{HostEventKind::Wake, 1, 5}}),
        Encode(RequestEnvelope{11, 12,
                               NcclCollective{1, CollectiveOp::AllGather, 8, 2, 0, DataType::Int64,
                                              RedOp::Sum, true, "12345678"}}),
        Encode(RequestEnvelope{13, 14, CollectiveValues{3, 4}}),
    };
    for (int i = 0; i < 30000; ++i)
    {
        std::string m = seeds[i % std::size(seeds)];
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f)
        {
            m[rng() % m.size()] = static_cast<char>(rng());
        }
        try
        {
            (void)DecodeRequest(m);
        }
        catch (const DecodeError&)
        {
        }
    }
    SUCCEED();
}

// A hello from a process that did not claim its rank (interposer/process_role.h) names the
// claimant, the call and its command line, for the bridge's refusal.
TEST(Codec, AHelpersHelloCarriesItsClaimantAndCall)
{
    Hello h{"token", 0, 2, 0, 4321, ""};
    h.claimedBy = 1234;
    h.call = "cudaMalloc";
    h.processCommand = "python -c import torch";
    const Hello out = RoundTripRequest(h);
    EXPECT_EQ(out.claimedBy, 1234);
    EXPECT_EQ(out.call, "cudaMalloc");
    EXPECT_EQ(out.processCommand, "python -c import torch");
}

namespace
{

std::string Longest(uint32_t bytes = kMaxStringBytes)
{
    return std::string(bytes, 'x');
}

phantora::nccl::Environment LongestEnvironment()
{
    return {Longest(), Longest(), Longest(), Longest(), Longest()};
}

Hello LongestHello()
{
    Hello h{Longest(), 1, 2, 3, 4, Longest(), 5, Longest()};
    h.claimedBy = 6;
    h.call = Longest();
    h.processCommand = Longest();
    return h;
}

/// The largest message of every request kind, in Request's order.
std::vector<Request> LargestRequests()
{
    NcclP2P p2p{1, 2, std::vector<P2POp>(kMaxP2POps, P2POp{1, 2, true, false, ""})};
    // the values the sends of one message may carry together, in the largest pieces
    for (uint32_t i = 0; i < kMaxP2PValueBytes / kMaxValueBytes; ++i)
    {
        p2p.ops[i].hasValues = true;
        p2p.ops[i].values = Longest(kMaxValueBytes);
    }
    return {
        LongestHello(),
        KernelLaunch{1, Longest(), {1, 2, 3}, {4, 5, 6}, 7, Longest(), Longest()},
        Memcpy{},
        Synchronize{},
        NcclCommInit{{}, 2, 1, LongestEnvironment()},
        NcclCollective{1, CollectiveOp::AllGather, 8, 2, 0, DataType::Uint8, RedOp::Sum, true,
                       Longest(kMaxValueBytes)},
        NcclCommDestroy{},
        Goodbye{},
        EventRecord{},
        StreamWaitEvent{},
        EventWait{},
        EventElapsed{},
        NcclCommSplit{1, 2, 3, LongestEnvironment()},
        p2p,
        HostEvent{},
        HostFunction{},
        HostFunctionDone{},
        CollectiveValues{},
        Watch{Longest(), Longest(), Longest(), 1, 2, 3, Longest(), true, true, Longest()},
        P2PValues{},
        TableChunk{},
    };
}

std::vector<Reply> LargestReplies()
{
    Welcome w;
    w.gpuName = Longest();
    return {
        w,
        Resume{},
        CommReady{},
        Failure{Longest()},
        QueryAnswer{},
        Elapsed{},
        CollectiveResult{true, Longest(kMaxValueBytes), 1},
        SupervisorNote{SupervisorNote::State::Failed, Longest()},
        TableData{Longest(kMaxTableChunkBytes)},
    };
}

} // namespace

// Each kind's bound is what it carries: its largest message encodes to exactly the bound,
// and decodes; one byte more of that kind is refused, naming the kind and its bound.
TEST(Codec, EachRequestKindsBoundIsItsLargestMessage)
{
    const std::vector<Request> largest = LargestRequests();
    ASSERT_EQ(largest.size(), std::variant_size_v<Request>);
    for (std::size_t kind = 0; kind < largest.size(); ++kind)
    {
        ASSERT_EQ(largest[kind].index(), kind);
        const std::string bytes = Encode(RequestEnvelope{1, 2, largest[kind], 3, 4});
        EXPECT_EQ(bytes.size(), MaxRequestBytes(kind)) << RequestName(largest[kind]);
        EXPECT_EQ(DecodeRequest(bytes).body.index(), kind);
        try
        {
            DecodeRequest(bytes + "x");
            ADD_FAILURE() << RequestName(largest[kind]) << " past its bound was accepted";
        }
        catch (const DecodeError& e)
        {
            const std::string what = e.what();
            // the largest kind is refused as larger than any message, the others by their own
            EXPECT_TRUE(what.find(std::string(RequestName(largest[kind])) + " of ") !=
                            std::string::npos ||
                        what.find("larger than any phantora message") != std::string::npos)
                << what;
        }
    }
    // small kinds get small bounds: a hello is no bigger than its five strings
    EXPECT_LT(MaxRequestBytes(2), 64u); // Memcpy
    EXPECT_LT(MaxRequestBytes(0), 6 * std::size_t{kMaxStringBytes});
}

TEST(Codec, EachReplyKindsBoundIsItsLargestMessage)
{
    const std::vector<Reply> largest = LargestReplies();
    ASSERT_EQ(largest.size(), std::variant_size_v<Reply>);
    for (std::size_t kind = 0; kind < largest.size(); ++kind)
    {
        ASSERT_EQ(largest[kind].index(), kind);
        const std::string bytes = Encode(ReplyEnvelope{1, largest[kind]});
        EXPECT_EQ(bytes.size(), MaxReplyBytes(kind)) << "reply kind " << kind;
        EXPECT_EQ(DecodeReply(bytes).body.index(), kind);
        EXPECT_THROW(DecodeReply(bytes + "x"), DecodeError) << "reply kind " << kind;
    }
    // the Welcome no longer carries the tables: it is bounded by its GPU name
    EXPECT_LT(MaxReplyBytes(0), std::size_t{kMaxStringBytes} + 128);
}

// A Resume (8 bytes of body) padded by 64 KiB is refused by its kind's bound before cereal
// reads it, though a TableData of that size would be accepted.
TEST(Codec, ASmallKindPaddedPastItsBoundIsRefusedNamingIt)
{
    const std::string resume = Encode(ReplyEnvelope{1, Resume{5}});
    try
    {
        DecodeReply(resume + std::string(1 << 16, '\0'));
        FAIL() << "a padded Resume was accepted";
    }
    catch (const DecodeError& e)
    {
        EXPECT_NE(std::string(e.what()).find("Resume of 65563 bytes is larger than that kind's "
                                             "27-byte bound"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Codec, SendsCarryingMoreValuesTogetherThanTheBoundAreRefused)
{
    NcclP2P p2p{1, 2, {}};
    for (uint32_t i = 0; i <= kMaxP2PValueBytes / kMaxValueBytes; ++i)
    {
        p2p.ops.push_back(P2POp{1, kMaxValueBytes, true, true, Longest(kMaxValueBytes)});
    }
    EXPECT_THROW(Encode(RequestEnvelope{1, 2, p2p}), VectorTooLong);
}
