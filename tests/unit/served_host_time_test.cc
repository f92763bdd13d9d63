// A bridge that serves ranks is not given the command: the first hello that names it
// (phantora-rank's PHANTORA_COMMAND) decides the host time, before any rank is welcomed,
// so a served run charges what a launched run of the same command charges.
#include "engine/simulation_engine.h"
#include "scripted_ranks.h"

#include <gtest/gtest.h>
#include <string>
#include <variant>
#include <vector>

using namespace phantora;

namespace
{

const wire::Welcome& WelcomeIn(const std::vector<OutgoingReply>& out)
{
    for (const auto& o : out)
    {
        if (const auto* w = std::get_if<wire::Welcome>(&o.reply.body))
        {
            return *w;
        }
    }
    throw std::runtime_error("no Welcome among the replies");
}

/// The host-time table \p rank's Welcome (in \p hello) announced, read as the rank reads
/// it: in chunks (wire::TableChunk) after its hello.
std::string HostTimeTable(SimulationEngine& engine, int rank,
                          const std::vector<OutgoingReply>& hello)
{
    const uint64_t bytes = WelcomeIn(hello).hostTimeTableBytes;
    std::string table;
    for (uint64_t order = 1; table.size() < bytes; ++order)
    {
        wire::RequestEnvelope req;
        req.seq = 1 + order;
        req.order = order;
        req.body = wire::TableChunk{wire::HostTable::HostTime, table.size()};
        std::vector<OutgoingReply> out;
        engine.Handle(rank, req, out);
        if (out.empty() || !std::holds_alternative<wire::TableData>(out.back().reply.body))
        {
            throw std::runtime_error("no TableData for a TableChunk");
        }
        table += std::get<wire::TableData>(out.back().reply.body).bytes;
    }
    return table;
}

wire::RequestEnvelope Hello(int rank, std::string command)
{
    wire::Hello h;
    h.rank = rank;
    h.worldSize = 2;
    h.command = std::move(command);
    wire::RequestEnvelope req;
    req.seq = 1;
    req.body = h;
    return req;
}

} // namespace

TEST(ServedHostTime, TheFirstHelloThatNamesTheCommandPricesEveryRanksHostTime)
{
    const Scenario s = test::EngineScenario("served", 2, 0);
    SimulationEngine engine(s, 2);
    HostTimeProfile before;
    before.table = "model-of-everything";
    engine.SetHostTime(before);
    std::vector<std::vector<std::string>> asked;
    engine.PrepareHostTimeAtFirstHello(
        [&asked](const std::vector<std::string>& command)
        {
            asked.push_back(command);
            HostTimeProfile p;
            p.table = "recording-of-" + command.back();
            return p;
        });
    std::vector<OutgoingReply> out;
    engine.Handle(0, Hello(0, "torchrun\n--nproc_per_node\n2\ntrain.py"), out);
    EXPECT_EQ(HostTimeTable(engine, 0, out), "recording-of-train.py");
    out.clear();
    // The second rank is welcomed with the same table, and it is prepared once.
    engine.Handle(1, Hello(1, "torchrun\n--nproc_per_node\n2\ntrain.py"), out);
    EXPECT_EQ(HostTimeTable(engine, 1, out), "recording-of-train.py");
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0],
              (std::vector<std::string>{"torchrun", "--nproc_per_node", "2", "train.py"}));
}

TEST(ServedHostTime, HellosWithoutACommandKeepWhatTheBridgeStartedWith)
{
    const Scenario s = test::EngineScenario("launched", 1, 0);
    SimulationEngine engine(s, 1);
    HostTimeProfile launched;
    launched.table = "recording-of-the-launched-command";
    engine.SetHostTime(launched);
    std::vector<OutgoingReply> out;
    engine.Handle(0, Hello(0, ""), out);
    EXPECT_EQ(HostTimeTable(engine, 0, out), "recording-of-the-launched-command");
}

TEST(ServedHostTime, AFirstHelloWithoutACommandPreparesForNoneOnce)
{
    // A rank phantora-rank did not start names no command: the served bridge prices what
    // it can without one (the model), once, as a launcher given no command would.
    const Scenario s = test::EngineScenario("served", 2, 0);
    SimulationEngine engine(s, 2);
    std::vector<std::vector<std::string>> asked;
    engine.PrepareHostTimeAtFirstHello(
        [&asked](const std::vector<std::string>& command)
        {
            asked.push_back(command);
            HostTimeProfile p;
            p.table = "model-of-everything";
            return p;
        });
    std::vector<OutgoingReply> out;
    engine.Handle(0, Hello(0, ""), out);
    engine.Handle(1, Hello(1, "python3\ntrain.py"), out);
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_TRUE(asked[0].empty());
    EXPECT_EQ(HostTimeTable(engine, 0, out), "model-of-everything");
}
