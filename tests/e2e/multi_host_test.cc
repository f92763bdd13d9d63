// Ranks on "two hosts": phantora-cluster --serve holds the bridge and the network, two
// groups of two ranks are started by phantora-rank (one group with torchrun's
// variables, one with srun's), all over CURVE.  The simulated step times must be the
// ones a single launcher gives the same four ranks; a rank with a foreign key, a stranger
// claiming a rank outside the world, a replayed hello or request are refused and logged
// while the run goes on; a bridge listening beyond this host needs keys.
#include "protocol/codec.h"
#include "run_helpers.h"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>
#include <zmq.h>
#include <zmq.hpp>

using namespace phantora::test;

namespace
{

constexpr const char* kExtra = R"([cpu]
time_scale = 0.0
call_overhead = "0us"
[kernels.durations]
phantora_step_kernel = "250us"
)";

/// One rank of a group: phantora-rank with \p identity (environment assignments),
/// its output prefixed as phantora-cluster prefixes a launched rank's.
std::string RankLine(int rank, const std::string& identity, const std::string& keys,
                     const std::string& idFile)
{
    return fmt::format("(env {} PHANTORA_EXAMPLE_ID_FILE={} {} --connect \"$EP\" --keys {} -- {} "
                       "1048576 3 2>&1; echo \"exit $?\") | sed 's/^/[rank {}] /' > rank{}.log &",
                       identity, idFile, PHANTORA_RANK, keys, PHANTORA_CUDA_EXAMPLE, rank, rank);
}

/// \p script as one single-quoted sh word.
std::string ShQuoted(const std::string& script)
{
    std::string quoted = "'";
    for (char c : script)
    {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

/// A served run of two ranks, each under its own phantora-rank, that runs far longer
/// than the test (each process under `timeout`, so that none outlives it): once rank 1
/// has made steps, \p kill (a shell command that may use $sup1, rank 1's
/// phantora-rank, and $rank1, its command) takes rank 1 away.  The
/// output has the server's exit status and the seconds it took to end after the kill.
CommandResult ServeTwoAndTakeRankOneAway(const std::string& kill)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(2, kExtra));
    const auto dir = ScratchDir();
    std::string script = fmt::format(
        "cd {dir} || exit 1; "
        "timeout 50 {cluster} --scenario {scenario} --serve --nproc 2 --listen 'tcp://127.0.0.1:*' "
        "--heartbeat-timeout 3 > server.log 2>&1 & server=$!; "
        "for i in $(seq 100); do grep -q 'serving on' server.log && break; sleep 0.1; done; "
        "EP=$(sed -n 's/.*serving on \\(tcp:[^ ;]*\\).*/\\1/p' server.log | head -1); "
        // The example's NCCL id file is named after MASTER_PORT, which these ranks lack:
        // each run gets its own, or two tests running at once would swap ids.
        "export PHANTORA_EXAMPLE_ID_FILE=\"$PWD/nccl.id\"; "
        "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 timeout 50 {rank} --connect \"$EP\" -- {example} 1048576 "
        "100000000 > rank0.log 2>&1 & sup0=$!; "
        "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 timeout 50 {rank} --connect \"$EP\" -- {example} 1048576 "
        "100000000 > rank1.log 2>&1 & sup1=$!; "
        "for i in $(seq 300); do grep -q 'rank 1 step 3 ' rank1.log && break; sleep 0.1; done; "
        "sup1=$(pgrep -P $sup1); rank1=$(pgrep -P $sup1); echo \"rank 1 is pid $rank1\"; "
        "{kill}; killed=$(date +%s); "
        "wait $server; echo \"server exit $? after $(( $(date +%s) - killed )) s\"; "
        "wait $sup0; echo \"rank 0 phantora-rank exit $?\"; "
        "cat server.log; tail -5 rank0.log",
        fmt::arg("dir", dir.string()), fmt::arg("cluster", PHANTORA_CLUSTER),
        fmt::arg("scenario", scenario.string()), fmt::arg("rank", PHANTORA_RANK),
        fmt::arg("example", PHANTORA_CUDA_EXAMPLE), fmt::arg("kill", kill));
    return RunCommand("timeout 60 sh -c " + ShQuoted(script));
}

/// The pid the script above printed for rank 1's command.
std::string RankOnePid(const std::string& output)
{
    const std::string key = "rank 1 is pid ";
    const auto at = output.find(key);
    if (at == std::string::npos)
    {
        return "?";
    }
    return output.substr(at + key.size(), output.find('\n', at) - at - key.size());
}

/// Seconds the script above reports between the kill and the server's end; -1: none.
int SecondsToEnd(const std::string& output)
{
    // exit status 3: the run ended because a rank failed (engine/simulation_error.h)
    const std::string key = "server exit 3 after ";
    const auto at = output.find(key);
    return at == std::string::npos ? -1 : std::atoi(output.c_str() + at + key.size());
}

} // namespace

TEST(MultiHost, AKilledServedRankEndsTheRunNamingIt)
{
    const CommandResult r = ServeTwoAndTakeRankOneAway("kill -KILL $rank1");
    const std::string pid = RankOnePid(r.output);
    ASSERT_NE(pid, "?") << r.output;
    const int seconds = SecondsToEnd(r.output);
    EXPECT_GE(seconds, 0) << r.output;
    EXPECT_LE(seconds, 10) << r.output;
    EXPECT_NE(r.output.find(fmt::format("rank 1 (host ")), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(fmt::format("pid {}) ", pid)), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("was killed by signal 9"), std::string::npos) << r.output;
    // the other rank's phantora-rank hears of the failure and stops its rank
    EXPECT_NE(r.output.find("phantora-rank: the simulation failed: rank 1 (host"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 0 phantora-rank exit 1"), std::string::npos) << r.output;
}

TEST(MultiHost, AServedRankWhoseHostGoesSilentEndsTheRunNamingIt)
{
    // The whole "host": phantora-rank and its command, gone without a word.
    const CommandResult r = ServeTwoAndTakeRankOneAway("kill -KILL $sup1 $rank1");
    const std::string pid = RankOnePid(r.output);
    ASSERT_NE(pid, "?") << r.output;
    const int seconds = SecondsToEnd(r.output);
    EXPECT_GE(seconds, 1) << r.output; // --heartbeat-timeout 3, heartbeats once a second
    EXPECT_LE(seconds, 10) << r.output;
    EXPECT_NE(r.output.find(fmt::format("rank 1 (host ")), std::string::npos) << r.output;
    EXPECT_NE(
        r.output.find(fmt::format("pid {}): lost: nothing heard from its phantora-rank", pid)),
        std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("rank 0 phantora-rank exit 1"), std::string::npos) << r.output;
}

TEST(MultiHost, ServedRanksOfTwoGroupsMatchOneLauncherAndAForeignKeyIsRefused)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(4, kExtra));
    const auto dir = ScratchDir();
    const CommandResult single = RunCommand(fmt::format(
        "PHANTORA_EXAMPLE_ID_FILE={} {} --scenario {} --nproc 4 -- {} 1048576 3",
        (dir / "single.id").string(), PHANTORA_CLUSTER, scenario.string(), PHANTORA_CUDA_EXAMPLE));
    ASSERT_EQ(single.exitCode, 0) << single.output;
    const auto expected = StepTimesNs(single.output);
    ASSERT_EQ(expected.size(), 12u) << single.output;

    // A foreign key pair: the bridge's public key, but a client key of its own.
    const auto keys = dir / "keys";
    const auto foreign = dir / "foreign";
    std::filesystem::create_directories(foreign);
    char pub[41];
    char sec[41];
    ASSERT_EQ(zmq_curve_keypair(pub, sec), 0);
    WriteFile("foreign/client.pub", std::string(pub) + "\n");
    WriteFile("foreign/client.secret", std::string(sec) + "\n");

    const std::string id = (dir / "served.id").string();
    std::string script = fmt::format(
        "cd {dir} || exit 1; rm -f served.id; "
        "{cluster} --scenario {scenario} --serve --nproc 4 --listen 'tcp://127.0.0.1:*' "
        "--keys {keys} > server.log 2>&1 & server=$!; "
        "for i in $(seq 100); do grep -q 'serving on' server.log && break; sleep 0.1; done; "
        "EP=$(sed -n 's/.*serving on \\(tcp:[^ ;]*\\).*/\\1/p' server.log | head -1); "
        "cp {keys}/server.pub {foreign}/; ",
        fmt::arg("dir", dir.string()), fmt::arg("cluster", PHANTORA_CLUSTER),
        fmt::arg("scenario", scenario.string()), fmt::arg("keys", keys.string()),
        fmt::arg("foreign", foreign.string()));
    // the intruder first, so that its refusal happens while the run is on
    script += fmt::format("(env RANK=0 WORLD_SIZE=4 LOCAL_RANK=0 PHANTORA_CONNECT_TIMEOUT=3 "
                          "{} --connect \"$EP\" --keys {} -- {} 1048576 3 > foreign.log 2>&1; "
                          "echo \"exit $?\" >> foreign.log) & ",
                          PHANTORA_RANK, foreign.string(), PHANTORA_CUDA_EXAMPLE);
    // "host" A: torchrun's variables; "host" B: srun's
    script += RankLine(0, "RANK=0 WORLD_SIZE=4 LOCAL_RANK=0", keys.string(), id);
    script += RankLine(1, "RANK=1 WORLD_SIZE=4 LOCAL_RANK=1", keys.string(), id);
    script += RankLine(2, "SLURM_PROCID=2 SLURM_NTASKS=4 SLURM_LOCALID=0", keys.string(), id);
    script += RankLine(3, "SLURM_PROCID=3 SLURM_NTASKS=4 SLURM_LOCALID=1", keys.string(), id);
    script += "wait $server; echo \"server exit $?\"; wait; "
              "cat server.log rank0.log rank1.log rank2.log rank3.log; "
              "echo '--- foreign'; cat foreign.log";
    const CommandResult served = RunCommand("timeout 50 sh -c " + ShQuoted(script));
    EXPECT_NE(served.output.find("server exit 0"), std::string::npos) << served.output;
    EXPECT_EQ(StepTimesNs(served.output), expected) << served.output;
    for (int r = 0; r < 4; ++r)
    {
        EXPECT_NE(served.output.find(fmt::format("[rank {}] exit 0", r)), std::string::npos)
            << served.output;
    }
    EXPECT_NE(served.output.find("refused a connection from 127.0.0.1"), std::string::npos)
        << served.output;
    const auto foreignAt = served.output.find("--- foreign");
    ASSERT_NE(foreignAt, std::string::npos) << served.output;
    const auto foreignPart = served.output.substr(foreignAt);
    EXPECT_NE(foreignPart.find("no answer from the bridge"), std::string::npos) << served.output;
    EXPECT_NE(foreignPart.find("exit 86"), std::string::npos) << served.output;
}

namespace
{

/// A Python rank that needs no torch: says its pid and parent, then, once the file
/// `go` exists, exits with argv[1] or, given "sleep", waits to be stopped.
constexpr const char* kProbe = R"(import os, sys, time
print(f"probe {os.environ['RANK']} pid {os.getpid()} ppid {os.getppid()}", flush=True)
while not os.path.exists("go"):
    time.sleep(0.05)
if sys.argv[1] == "sleep":
    time.sleep(100)
sys.exit(int(sys.argv[1]))
)";

/// One served rank, `python3 -u probe.py ARG` under phantora-rank (\p options added)
/// against a bridge of one rank, each run with a socket folder of its own
/// (XDG_RUNTIME_DIR, short: a socket's path has at most 107 bytes).  Once the probe has
/// printed its line, `go` is made and \p then runs (it may use
/// $sup, phantora-rank's pid, $standin, its command's, $rank, the forked rank's, and
/// $server, the fork server's).  The output has phantora-rank's exit status, whether the
/// forked rank is gone by then, the bridge's log and the rank's.
CommandResult ServeOneProbe(const std::string& arg, const std::string& options,
                            const std::string& then, const std::string& preload = "json")
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1, kExtra));
    const auto dir = ScratchDir();
    WriteFile("probe.py", kProbe);
    std::string script = fmt::format(
        "cd {dir} || exit 1; export XDG_RUNTIME_DIR=$(mktemp -d /tmp/phr.XXXXXX); "
        "{cluster} --scenario {scenario} --serve --nproc 1 --listen 'tcp://127.0.0.1:*' "
        "> server.log 2>&1 & bridge=$!; "
        "for i in $(seq 100); do grep -q 'serving on' server.log && break; sleep 0.1; done; "
        "EP=$(sed -n 's/.*serving on \\(tcp:[^ ;]*\\).*/\\1/p' server.log | head -1); "
        "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 {rank} --connect \"$EP\" --fork-server-preload {preload} "
        "{options} -- python3 -u {probe} {arg} > rank.log 2>&1 & sup=$!; "
        "for i in $(seq 300); do grep -q '^probe 0' rank.log && break; "
        "kill -0 $sup 2>/dev/null || break; sleep 0.1; done; "
        "standin=$(pgrep -P $sup); "
        "rank=$(sed -n 's/.*forked as pid \\([0-9]*\\).*/\\1/p' rank.log); "
        "server=$(sed -n 's/.*fork server (pid \\([0-9]*\\).*/\\1/p' rank.log); "
        "echo \"stand-in $standin rank $rank server $server\"; touch go; "
        "{then}; wait $sup; echo \"phantora-rank exit $?\"; "
        // gone: no process, or a zombie that its new parent has yet to reap
        "for i in $(seq 30); do state=$(sed 's/.*) //' /proc/$rank/stat 2>/dev/null | cut -c1); "
        "[ -z \"$state\" ] || [ \"$state\" = Z ] && break; sleep 0.1; done; "
        "[ -n \"$state\" ] && [ \"$state\" != Z ] && echo 'the rank lives on'; "
        "for i in $(seq 200); do kill -0 $bridge 2>/dev/null || break; sleep 0.1; done; "
        "kill $bridge 2>/dev/null; cat server.log rank.log; rm -rf \"$XDG_RUNTIME_DIR\"",
        fmt::arg("dir", dir.string()), fmt::arg("cluster", PHANTORA_CLUSTER),
        fmt::arg("scenario", scenario.string()), fmt::arg("rank", PHANTORA_RANK),
        fmt::arg("options", options), fmt::arg("probe", (dir / "probe.py").string()),
        fmt::arg("arg", arg), fmt::arg("then", then), fmt::arg("preload", preload));
    return RunCommand("timeout 60 sh -c " + ShQuoted(script));
}

/// The number after \p key in \p output; -1 if none.
long NumberAfter(const std::string& output, const std::string& key)
{
    const auto at = output.find(key);
    return at == std::string::npos ? -1 : std::atol(output.c_str() + at + key.size());
}

} // namespace

TEST(MultiHost, AForkedServedRanksExitStatusReachesItsLauncher)
{
    const CommandResult r = ServeOneProbe("3", "", "true");
    // The rank was forked by this host's fork server, not exec'd by phantora-rank: its
    // parent is the fork server, and the stand-in is another process.
    const long standIn = NumberAfter(r.output, "stand-in ");
    const long rank = NumberAfter(r.output, " rank ");
    const long server = NumberAfter(r.output, " server ");
    ASSERT_GT(rank, 0) << r.output;
    ASSERT_GT(server, 0) << r.output;
    EXPECT_NE(r.output.find(fmt::format("probe 0 pid {} ppid {}", rank, server)), std::string::npos)
        << r.output;
    EXPECT_NE(
        r.output.find(fmt::format("[phantora] rank 0 (pid {}) forked as pid {}", standIn, rank)),
        std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 3"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(fmt::format("python3 (pid {}) exited with status 3", standIn)),
              std::string::npos)
        << r.output;
}

TEST(MultiHost, AForkedServedRankDiesOfItsLaunchersSigterm)
{
    // What torchrun's agent or srun does to stop a rank: SIGTERM to the process it
    // started, the stand-in, which passes it to the rank and then dies of it too.
    const CommandResult r = ServeOneProbe("sleep", "", "kill -TERM $standin");
    const long standIn = NumberAfter(r.output, "stand-in ");
    ASSERT_GT(NumberAfter(r.output, " rank "), 0) << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 143"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(fmt::format("python3 (pid {}) was killed by signal 15", standIn)),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("the rank lives on"), std::string::npos) << r.output;
}

TEST(MultiHost, AForkServerThatDiesEndsItsRanksNamingIt)
{
    const CommandResult r = ServeOneProbe("sleep", "", "kill -KILL $server");
    const long server = NumberAfter(r.output, " server ");
    ASSERT_GT(server, 0) << r.output;
    EXPECT_NE(r.output.find(
                  fmt::format("phantora-rank: rank 0: this host's fork server (pid {}, ", server)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("ended before rank 0 did"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 1"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("the rank lives on"), std::string::npos) << r.output;
}

TEST(MultiHost, NoForkServerExecsTheServedRank)
{
    const CommandResult r = ServeOneProbe("3", "--no-fork-server", "true");
    const long standIn = NumberAfter(r.output, "stand-in ");
    ASSERT_GT(standIn, 0) << r.output;
    // phantora-rank's child is the rank itself
    EXPECT_NE(r.output.find(fmt::format("probe 0 pid {} ppid", standIn)), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("forked as pid"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 3"), std::string::npos) << r.output;
}

TEST(MultiHost, AForkServerWhosePreloadFailsEndsTheRankWithItsLog)
{
    const CommandResult r = ServeOneProbe("0", "", "true", "phantora_no_such_module");
    EXPECT_NE(r.output.find("phantora-rank: rank 0: this host's fork server for "),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("did not start; its log "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("No module named 'phantora_no_such_module'"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 1"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("probe 0 pid"), std::string::npos) << r.output;
}

TEST(MultiHost, AKilledForkedServedRankEndsAsAnExecdOneDoes)
{
    // The stand-in dies of the rank's signal: the launcher, phantora-rank and the bridge
    // see what they see when an exec'd rank is killed.
    const CommandResult r = ServeOneProbe("sleep", "", "kill -KILL $rank");
    const long standIn = NumberAfter(r.output, "stand-in ");
    ASSERT_GT(NumberAfter(r.output, " rank "), 0) << r.output;
    EXPECT_NE(r.output.find("phantora-rank exit 137"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(fmt::format("python3 (pid {}) was killed by signal 9", standIn)),
              std::string::npos)
        << r.output;
}

namespace
{

/// What the bridge answers \p hello sent from a new connection to \p endpoint, as a
/// stranger (or a replaying host) would send it; "" if no answer came within 10 s.
std::string AnswerToHello(const std::string& endpoint, const phantora::wire::Hello& hello)
{
    using namespace phantora::wire;
    zmq::context_t ctx(1);
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.connect(endpoint);
    RequestEnvelope req;
    req.seq = 1;
    req.body = hello;
    s.send(zmq::buffer(Encode(req)), zmq::send_flags::none);
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::seconds(10));
    zmq::message_t reply;
    if (!(item.revents & ZMQ_POLLIN) || !s.recv(reply, zmq::recv_flags::none))
    {
        return "";
    }
    const ReplyEnvelope answer = DecodeReply(reply.to_string_view());
    const auto* failure = std::get_if<Failure>(&answer.body);
    return failure ? failure->message : "(not a failure)";
}

/// Sends, from a new connection, a kernel launch numbered as a rank's second request (a
/// request captured on the way and sent again): no hello came before it.
void ReplayALaunch(const std::string& endpoint)
{
    using namespace phantora::wire;
    zmq::context_t ctx(1);
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 1000);
    s.connect(endpoint);
    RequestEnvelope req;
    req.seq = 2;
    req.order = 1;
    req.body = KernelLaunch{1, "phantora_step_kernel", {1, 1, 1}, {1, 1, 1}, 0, "", ""};
    s.send(zmq::buffer(Encode(req)), zmq::send_flags::none);
}

} // namespace

TEST(MultiHost, AServedBridgeRefusesAndLogsStrangersAndReplaysAndItsRunGoesOn)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1, kExtra));
    const auto dir = ScratchDir();
    std::filesystem::remove(dir / "go");
    // The bridge and, once `go` exists, its one rank (long enough for the replay below to
    // come while it runs), each under `timeout` so that none outlives the test.
    const std::string script = fmt::format(
        "cd {dir} || exit 1; "
        "timeout 100 {cluster} --scenario {scenario} --serve --nproc 1 --listen "
        "'tcp://127.0.0.1:*' "
        "> server.log 2>&1 & server=$!; "
        "for i in $(seq 100); do grep -q 'serving on' server.log && break; sleep 0.1; done; "
        "sed -n 's/.*serving on \\(tcp:[^ ;]*\\).*/\\1/p' server.log | head -1 > endpoint; "
        "for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done; "
        "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 PHANTORA_EXAMPLE_ID_FILE=$PWD/nccl.id timeout 100 {rank} "
        "--connect \"$(cat endpoint)\" -- {example} 1048576 3000 > rank.log 2>&1; "
        "echo \"rank exit $?\"; wait $server; echo \"server exit $?\"; cat server.log; tail -3 "
        "rank.log",
        fmt::arg("dir", dir.string()), fmt::arg("cluster", PHANTORA_CLUSTER),
        fmt::arg("scenario", scenario.string()), fmt::arg("rank", PHANTORA_RANK),
        fmt::arg("example", PHANTORA_CUDA_EXAMPLE));
    auto run = std::async(std::launch::async,
                          [&] { return RunCommand("timeout 120 sh -c " + ShQuoted(script)); });
    std::string endpoint;
    for (int i = 0; i < 200 && endpoint.empty(); ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream(dir / "endpoint") >> endpoint;
    }
    ASSERT_FALSE(endpoint.empty()) << "the bridge did not say where it serves";

    phantora::wire::Hello stranger;
    stranger.rank = 5;
    stranger.worldSize = 8;
    stranger.pid = 4242;
    EXPECT_NE(AnswerToHello(endpoint, stranger).find("rank 5 is outside the world of 1 ranks"),
              std::string::npos);
    ReplayALaunch(endpoint);

    WriteFile("go", "");
    bool stepping = false;
    for (int i = 0; i < 600 && !stepping; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream log(dir / "rank.log");
        const std::string text{std::istreambuf_iterator<char>(log), {}};
        stepping = text.find("rank 0 step 2 ") != std::string::npos;
    }
    ASSERT_TRUE(stepping) << "rank 0 never made two steps";
    phantora::wire::Hello replayed;
    replayed.rank = 0;
    replayed.worldSize = 1;
    replayed.pid = 4243;
    EXPECT_NE(AnswerToHello(endpoint, replayed).find("rank 0 is already connected"),
              std::string::npos);

    const CommandResult r = run.get();
    EXPECT_NE(r.output.find("rank exit 0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("server exit 0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rank 0 step 2999 "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("refused a connection from 127.0.0.1 claiming rank 5 (pid 4242): "
                            "outside the world of 1 ranks"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("ignored KernelLaunch from a peer that has not said hello (127.0.0.1)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("refused a connection from 127.0.0.1 claiming rank 0 (pid 4243) thread "
                            "0: the rank is already connected"),
              std::string::npos)
        << r.output;
}

TEST(MultiHost, ListeningBeyondThisHostWithoutKeysIsRefusedWithTheReason)
{
    const auto scenario = WriteFile("s.toml", SwitchScenario(1, kExtra));
    const CommandResult served =
        RunCommand(fmt::format("{} --scenario {} --serve --nproc 1 --listen tcp://0.0.0.0:0 2>&1",
                               PHANTORA_CLUSTER, scenario.string()));
    EXPECT_EQ(served.exitCode, 2) << served.output;
    EXPECT_NE(served.output.find("--listen tcp://0.0.0.0:0 is reachable from other hosts, and "
                                 "without --keys"),
              std::string::npos)
        << served.output;
    const CommandResult launched =
        RunCommand(fmt::format("{} --scenario {} --nproc 1 --bind 0.0.0.0 -- {} 1024 1 2>&1",
                               PHANTORA_CLUSTER, scenario.string(), PHANTORA_CUDA_EXAMPLE));
    EXPECT_EQ(launched.exitCode, 2) << launched.output;
    EXPECT_NE(launched.output.find("--bind 0.0.0.0 is reachable from other hosts"),
              std::string::npos)
        << launched.output;
    // with keys it serves (and, given no rank, ends at the connect timeout)
    const CommandResult keyed = RunCommand(fmt::format(
        "{} --scenario {} --serve --nproc 1 --listen tcp://0.0.0.0:0 --keys {} --connect-timeout 1 "
        "2>&1",
        PHANTORA_CLUSTER, scenario.string(), (ScratchDir() / "keys").string()));
    EXPECT_NE(keyed.output.find("(CURVE)"), std::string::npos) << keyed.output;
}
