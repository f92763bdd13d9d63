// NCCL_ALGO / NCCL_PROTO specs as NCCL reads them, and the tuning model honouring them.
#include "ns3/nccl-selection.h"
#include "ns3/nccl-tuning.h"
#include "ns3/test.h"

#include <stdexcept>
#include <string>

using namespace ns3;

namespace
{

bool Throws(const std::string& algo, const std::string& proto, const std::string& needle)
{
    try
    {
        NcclValidateAlgorithmSpec(algo);
        NcclValidateProtocolSpec(proto);
    }
    catch (const std::invalid_argument& e)
    {
        return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
}

} // namespace

class NcclSpecGrammarTestCase : public TestCase
{
public:
    NcclSpecGrammarTestCase() : TestCase("lists, exclusions and per-collective entries") {}

private:
    void DoRun() override
    {
        using A = NcclAlgorithm;
        using K = NcclCollectiveKind;
        using P = NcclProtocol;
        NS_TEST_EXPECT_MSG_EQ(NcclAllowedAlgorithms("", K::AllReduce).size(), 2, "empty: all");
        auto ring = NcclAllowedAlgorithms("Ring", K::AllReduce);
        NS_TEST_ASSERT_MSG_EQ(ring.size(), 1, "one named");
        NS_TEST_EXPECT_MSG_EQ((ring[0] == A::Ring), true, "case-insensitive ring");
        auto notTree = NcclAllowedAlgorithms("^TREE", K::AllReduce);
        NS_TEST_ASSERT_MSG_EQ(notTree.size(), 1, "exclusion");
        NS_TEST_EXPECT_MSG_EQ((notTree[0] == A::Ring), true, "^tree leaves ring");
        // Unmodelled algorithms are accepted and simply never chosen.
        auto withNvls = NcclAllowedAlgorithms("NVLS,Tree", K::AllReduce);
        NS_TEST_ASSERT_MSG_EQ(withNvls.size(), 1, "nvls dropped");
        NS_TEST_EXPECT_MSG_EQ((withNvls[0] == A::Tree), true, "tree kept");

        const std::string perOp = "allreduce:tree;allgather:ring;^ring";
        NS_TEST_EXPECT_MSG_EQ((NcclAllowedAlgorithms(perOp, K::AllReduce)[0] == A::Tree), true,
                              "allreduce entry");
        NS_TEST_EXPECT_MSG_EQ((NcclAllowedAlgorithms(perOp, K::AllGather)[0] == A::Ring), true,
                              "allgather entry");
        NS_TEST_EXPECT_MSG_EQ((NcclAllowedAlgorithms(perOp, K::ReduceScatter)[0] == A::Tree), true,
                              "the general entry for the rest");

        auto protos = NcclAllowedProtocols("^LL", K::AllReduce);
        NS_TEST_ASSERT_MSG_EQ(protos.size(), 2, "^LL leaves two");
        NS_TEST_EXPECT_MSG_EQ((protos[0] == P::LL128 && protos[1] == P::Simple), true,
                              "LL128, Simple");
        NS_TEST_EXPECT_MSG_EQ(NcclAllowedProtocols("ll,simple", K::AllGather).size(), 2, "a list");

        NS_TEST_EXPECT_MSG_EQ(Throws("rign", "", "unknown name 'rign'"), true, "typo named");
        NS_TEST_EXPECT_MSG_EQ(Throws("", "LL256", "NCCL_PROTO: unknown name 'LL256'"), true,
                              "protocol typo named");
        NS_TEST_EXPECT_MSG_EQ(Throws("allreduse:ring", "", "unknown collective 'allreduse'"), true,
                              "collective typo named");
        NS_TEST_EXPECT_MSG_EQ(Throws("nvls", "", "nothing Phantora models"), true,
                              "only unmodelled algorithms");
        NS_TEST_EXPECT_MSG_EQ(Throws("", "^ll,ll128,simple", "nothing Phantora models"), true,
                              "every protocol excluded");
    }
};

class NcclChoiceHonoursSpecTestCase : public TestCase
{
public:
    NcclChoiceHonoursSpecTestCase() : TestCase("the tuning model picks only what the spec allows")
    {
    }

private:
    void DoRun() override
    {
        const NcclCommShape twoNodes{16, 8};
        NcclConfig automatic;
        const uint64_t small = 4096;
        const uint64_t large = 1ULL << 30;
        // With everything allowed the model picks different protocols by size ...
        const NcclChoice s = ChooseNccl(NcclCollectiveKind::AllReduce, twoNodes, small, automatic);
        const NcclChoice l = ChooseNccl(NcclCollectiveKind::AllReduce, twoNodes, large, automatic);
        NS_TEST_EXPECT_MSG_EQ((s.protocol != l.protocol), true, "size moves the protocol");
        // ... and never one the spec leaves out.
        NcclConfig noLl = automatic;
        noLl.protocol = "^LL";
        NS_TEST_EXPECT_MSG_EQ(
            (ChooseNccl(NcclCollectiveKind::AllReduce, twoNodes, small, noLl).protocol !=
             NcclProtocol::LL),
            true, "^LL honoured");
        NcclConfig treeOnlyForAllReduce = automatic;
        treeOnlyForAllReduce.algorithm = "allreduce:tree;ring";
        NS_TEST_EXPECT_MSG_EQ(
            (ChooseNccl(NcclCollectiveKind::AllReduce, twoNodes, large, treeOnlyForAllReduce)
                 .algorithm == NcclAlgorithm::Tree),
            true, "per-collective tree");
        NS_TEST_EXPECT_MSG_EQ(
            (ChooseNccl(NcclCollectiveKind::AllGather, twoNodes, large, treeOnlyForAllReduce)
                 .algorithm == NcclAlgorithm::Ring),
            true, "ring for the rest");
    }
};

class NcclSelectionTestSuite : public TestSuite
{
public:
    NcclSelectionTestSuite() : TestSuite("phantora-nccl-selection", UNIT)
    {
        AddTestCase(new NcclSpecGrammarTestCase, TestCase::QUICK);
        AddTestCase(new NcclChoiceHonoursSpecTestCase, TestCase::QUICK);
    }
};

static NcclSelectionTestSuite g_ncclSelectionTestSuite;
