// NCCL_ALGO / NCCL_PROTO specs as NCCL reads them, and the tuning model honouring them.
#include "nccl/selection.h"
#include "nccl/tuning.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace nccl = phantora::nccl;

namespace
{

bool Throws(const std::string& algo, const std::string& proto, const std::string& needle)
{
    try
    {
        nccl::ValidateAlgorithmSpec(algo);
        nccl::ValidateProtocolSpec(proto);
    }
    catch (const std::invalid_argument& e)
    {
        return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
}

} // namespace

TEST(NcclSelection, ListsExclusionsAndPerCollectiveEntries)
{
    using A = nccl::Algorithm;
    using K = nccl::CollectiveKind;
    using P = nccl::Protocol;
    EXPECT_EQ(nccl::AllowedAlgorithms("", K::AllReduce).size(), 3U) << "empty: all";
    auto ring = nccl::AllowedAlgorithms("Ring", K::AllReduce);
    ASSERT_EQ(ring.size(), 1U) << "one named";
    EXPECT_TRUE(ring[0] == A::Ring) << "case-insensitive ring";
    auto notTree = nccl::AllowedAlgorithms("^TREE", K::AllReduce);
    ASSERT_EQ(notTree.size(), 2U) << "exclusion";
    EXPECT_TRUE(notTree[0] == A::Ring && notTree[1] == A::Nvls) << "^tree leaves ring, nvls";
    // Unmodelled algorithms are accepted and simply never chosen.
    auto withPat = nccl::AllowedAlgorithms("PAT,NVLSTree,Tree", K::AllReduce);
    ASSERT_EQ(withPat.size(), 1U) << "pat and nvlstree dropped";
    EXPECT_TRUE(withPat[0] == A::Tree) << "tree kept";
    auto nvls = nccl::AllowedAlgorithms("NVLS", K::AllReduce);
    ASSERT_EQ(nvls.size(), 1U);
    EXPECT_TRUE(nvls[0] == A::Nvls) << "nvls is modelled";

    const std::string perOp = "allreduce:tree;allgather:ring;^ring";
    EXPECT_TRUE(nccl::AllowedAlgorithms(perOp, K::AllReduce)[0] == A::Tree) << "allreduce entry";
    EXPECT_TRUE(nccl::AllowedAlgorithms(perOp, K::AllGather)[0] == A::Ring) << "allgather entry";
    EXPECT_TRUE(nccl::AllowedAlgorithms(perOp, K::ReduceScatter)[0] == A::Tree)
        << "the general entry for the rest";

    auto protos = nccl::AllowedProtocols("^LL", K::AllReduce);
    ASSERT_EQ(protos.size(), 2U) << "^LL leaves two";
    EXPECT_TRUE(protos[0] == P::LL128 && protos[1] == P::Simple) << "LL128, Simple";
    EXPECT_EQ(nccl::AllowedProtocols("ll,simple", K::AllGather).size(), 2U) << "a list";

    EXPECT_TRUE(Throws("rign", "", "unknown name 'rign'")) << "typo named";
    EXPECT_TRUE(Throws("", "LL256", "NCCL_PROTO: unknown name 'LL256'")) << "protocol typo named";
    EXPECT_TRUE(Throws("allreduse:ring", "", "unknown collective 'allreduse'"))
        << "collective typo named";
    EXPECT_TRUE(Throws("pat", "", "nothing Phantora models")) << "only unmodelled algorithms";
    EXPECT_TRUE(Throws("", "^ll,ll128,simple", "nothing Phantora models"))
        << "every protocol excluded";
}

TEST(NcclSelection, TheTuningModelPicksOnlyWhatTheSpecAllows)
{
    const nccl::CommShape twoNodes{16, 8};
    nccl::Config automatic;
    const uint64_t small = 4096;
    const uint64_t large = 1ULL << 30;
    // With everything allowed the model picks different protocols by size ...
    const nccl::Choice s =
        nccl::Choose(nccl::CollectiveKind::AllReduce, twoNodes, small, automatic);
    const nccl::Choice l =
        nccl::Choose(nccl::CollectiveKind::AllReduce, twoNodes, large, automatic);
    EXPECT_TRUE(s.protocol != l.protocol) << "size moves the protocol";
    // ... and never one the spec leaves out.
    nccl::Config noLl = automatic;
    noLl.protocol = "^LL";
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllReduce, twoNodes, small, noLl).protocol !=
                nccl::Protocol::LL)
        << "^LL honoured";
    nccl::Config treeOnlyForAllReduce = automatic;
    treeOnlyForAllReduce.algorithm = "allreduce:tree;ring";
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllReduce, twoNodes, large, treeOnlyForAllReduce)
                    .algorithm == nccl::Algorithm::Tree)
        << "per-collective tree";
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllGather, twoNodes, large, treeOnlyForAllReduce)
                    .algorithm == nccl::Algorithm::Ring)
        << "ring for the rest";
}
