// Ranks on "two hosts": phantora-cluster --serve holds the bridge and the network, two
// groups of two ranks are started by phantora-rank (one group with torchrun's
// variables, one with srun's), all over CURVE.  The simulated step times must be the
// ones a single launcher gives the same four ranks; a rank with a foreign key is
// refused and logged.
#include "run_helpers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zmq.h>

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

} // namespace

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
    const CommandResult served =
        RunCommand("timeout 50 sh -c '" +
                   [&]
                   {
                       std::string quoted;
                       for (char c : script)
                       {
                           quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
                       }
                       return quoted;
                   }() +
                   "'");
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
