// NCCL's tuning variables as a process has them, and their one parse into the model's
// settings: what each does to a Config, and NCCL's refusals naming the variable, its value
// and what was expected.
#include "nccl/config.h"
#include "nccl/environment.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace nccl = phantora::nccl;

namespace
{

/// The message WithEnvironment() throws for \p env on \p config, "" if it accepts it.
std::string Refusal(const nccl::Environment& env, const nccl::Config& config = {})
{
    try
    {
        nccl::WithEnvironment(config, env);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    return "";
}

/// Sets (or, for nullptr, unsets) one variable for the scope.
class ScopedVariable
{
public:
    ScopedVariable(const char* name, const char* value) : m_name(name)
    {
        if (const char* old = std::getenv(name))
        {
            m_old = old;
            m_had = true;
        }
        value ? setenv(name, value, 1) : unsetenv(name);
    }
    ~ScopedVariable() { m_had ? setenv(m_name, m_old.c_str(), 1) : unsetenv(m_name); }
    ScopedVariable(const ScopedVariable&) = delete;
    ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
    const char* m_name;
    std::string m_old;
    bool m_had{false};
};

} // namespace

TEST(NcclEnvironment, UnsetVariablesLeaveTheSettingsAlone)
{
    nccl::Config c;
    c.algorithm = "ring";
    c.protocol = "simple";
    c.minChannels = 2;
    c.maxChannels = 8;
    c.nvlsEnable = true;
    const nccl::Config out = nccl::WithEnvironment(c, {});
    EXPECT_EQ(out.algorithm, "ring");
    EXPECT_EQ(out.protocol, "simple");
    EXPECT_EQ(out.minChannels, 2U);
    EXPECT_EQ(out.maxChannels, 8U);
    EXPECT_TRUE(out.nvlsEnable);
}

TEST(NcclEnvironment, EachVariableSetsItsSetting)
{
    nccl::Config c;
    c.nvlsEnable = true;
    const nccl::Config out = nccl::WithEnvironment(c, {"allreduce:tree", "^LL128", "2", "4", "0"});
    EXPECT_EQ(out.algorithm, "allreduce:tree") << "NCCL_ALGO, as the spec it is";
    EXPECT_EQ(out.protocol, "^LL128") << "NCCL_PROTO, as the spec it is";
    EXPECT_EQ(out.minChannels, 2U) << "NCCL_MIN_NCHANNELS";
    EXPECT_EQ(out.maxChannels, 4U) << "NCCL_MAX_NCHANNELS";
    EXPECT_FALSE(out.nvlsEnable) << "NCCL_NVLS_ENABLE=0 turns NVLS off";
    EXPECT_TRUE(nccl::WithEnvironment(c, {"", "", "", "", "2"}).nvlsEnable)
        << "2 (NCCL's default): on where the node has it";
    EXPECT_TRUE(nccl::WithEnvironment(c, {"", "", "", "", "1"}).nvlsEnable);
    EXPECT_FALSE(nccl::WithEnvironment(nccl::Config{}, {"", "", "", "", "2"}).nvlsEnable)
        << "2 on a node without NVLS: off";
}

TEST(NcclEnvironment, OneChannelBoundGivenAloneMovesTheOtherAsNcclClamps)
{
    nccl::Config c;
    c.minChannels = 2;
    c.maxChannels = 8;
    const nccl::Config low = nccl::WithEnvironment(c, {"", "", "", "1", ""});
    EXPECT_EQ(low.maxChannels, 1U);
    EXPECT_EQ(low.minChannels, 1U) << "the scenario's minimum follows the maximum down";
    const nccl::Config high = nccl::WithEnvironment(c, {"", "", "12", "", ""});
    EXPECT_EQ(high.minChannels, 12U);
    EXPECT_EQ(high.maxChannels, 12U) << "the scenario's maximum follows the minimum up";
}

TEST(NcclEnvironment, ValuesNcclRefusesNameTheVariableTheValueAndWhatWasExpected)
{
    EXPECT_EQ(Refusal({"", "", "0", "", ""}),
              "NCCL_MIN_NCHANNELS='0': expected a channel count from 1 to 64");
    EXPECT_EQ(Refusal({"", "", "", "65", ""}),
              "NCCL_MAX_NCHANNELS='65': expected a channel count from 1 to 64");
    EXPECT_EQ(Refusal({"", "", "", "4x", ""}),
              "NCCL_MAX_NCHANNELS='4x': expected a channel count from 1 to 64");
    EXPECT_EQ(Refusal({"", "", "8", "4", ""}), "NCCL_MIN_NCHANNELS=8 is above NCCL_MAX_NCHANNELS=4");
    EXPECT_EQ(Refusal({"", "", "", "", "3"}), "NCCL_NVLS_ENABLE='3': expected 0, 1 or 2");
    EXPECT_EQ(Refusal({"", "", "", "", "on"}), "NCCL_NVLS_ENABLE='on': expected 0, 1 or 2");
    EXPECT_EQ(Refusal({"", "", "", "", "1"}),
              "NCCL_NVLS_ENABLE=1 on a node without NVLS (the scenario's [nccl] nvls is false)");
    // NCCL_ALGO / NCCL_PROTO: the spec's own errors (selection.h) name the token.
    EXPECT_NE(Refusal({"rign", "", "", "", ""}).find("NCCL_ALGO: unknown name 'rign'"),
              std::string::npos);
    EXPECT_NE(Refusal({"", "LL256", "", "", ""}).find("NCCL_PROTO: unknown name 'LL256'"),
              std::string::npos);
    EXPECT_NE(Refusal({"ring;tree", "", "", "", ""}).find("must have a collective prefix"),
              std::string::npos)
        << "checked for every collective, as NCCL parses it at communicator creation";
    EXPECT_EQ(Refusal({"Ring", "LL", "1", "64", "0"}), "") << "all within range";
}

TEST(NcclEnvironment, AProcessesVariablesWinOverTheConfigsCtaBounds)
{
    ScopedVariable algo("NCCL_ALGO", "Tree");
    ScopedVariable proto("NCCL_PROTO", nullptr);
    ScopedVariable lo("NCCL_MIN_NCHANNELS", nullptr);
    ScopedVariable hi("NCCL_MAX_NCHANNELS", "6");
    ScopedVariable nvls("NCCL_NVLS_ENABLE", "0");
    const nccl::Environment plain = nccl::Environment::OfProcess();
    EXPECT_TRUE(plain == nccl::Environment({"Tree", "", "", "6", "0"}));
    // ncclConfig_t's minCTAs / maxCTAs stand for the variables NCCL_*_NCHANNELS left unset.
    const nccl::Environment withCtas = nccl::Environment::OfProcess(3, 12);
    EXPECT_EQ(withCtas.minChannels, "3") << "minCTAs: NCCL_MIN_NCHANNELS is unset";
    EXPECT_EQ(withCtas.maxChannels, "6") << "NCCL_MAX_NCHANNELS wins over maxCTAs";
    EXPECT_EQ(nccl::Environment::OfProcess(std::nullopt, 12).minChannels, "");
}
