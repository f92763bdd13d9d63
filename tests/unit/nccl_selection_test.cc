// NCCL_ALGO / NCCL_PROTO specs as NCCL reads them, and the tuning model honouring them.
#include "nccl/selection.h"
#include "nccl/tuning.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

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
    EXPECT_EQ(nccl::AllowedAlgorithms("", K::AllReduce).size(), 4U)
        << "empty: all the modelled ones (tree, ring, nvls, nvlstree)";
    auto ring = nccl::AllowedAlgorithms("Ring", K::AllReduce);
    ASSERT_EQ(ring.size(), 1U) << "one named";
    EXPECT_TRUE(ring[0] == A::Ring) << "case-insensitive ring";
    auto notTree = nccl::AllowedAlgorithms("^TREE", K::AllReduce);
    ASSERT_EQ(notTree.size(), 3U) << "exclusion";
    EXPECT_TRUE(notTree[0] == A::Ring && notTree[1] == A::Nvls && notTree[2] == A::NvlsTree)
        << "^tree leaves ring, nvls, nvlstree";
    // NCCL 2.28's names (ncclAlgoStr): the unmodelled ones are accepted, never chosen.
    auto withPat = nccl::AllowedAlgorithms("PAT,CollNetDirect,CollNetChain,Tree", K::AllReduce);
    ASSERT_EQ(withPat.size(), 1U) << "pat and collnet dropped";
    EXPECT_TRUE(withPat[0] == A::Tree) << "tree kept";
    auto nvls = nccl::AllowedAlgorithms("NVLS,nvlstree", K::AllReduce);
    ASSERT_EQ(nvls.size(), 2U);
    EXPECT_TRUE(nvls[0] == A::Nvls && nvls[1] == A::NvlsTree) << "both NVLS algorithms modelled";
    auto notNvls = nccl::AllowedAlgorithms("^nvls,NVLSTree", K::AllReduce);
    ASSERT_EQ(notNvls.size(), 2U);
    EXPECT_TRUE(notNvls[0] == A::Tree && notNvls[1] == A::Ring) << "^ excludes a whole list";

    // NCCL's own examples (src/graph/tuning.cc): the first entry may go without a prefix and
    // applies to every collective; a later entry replaces it for its collective.
    const std::string perOp = "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring";
    EXPECT_TRUE(nccl::AllowedAlgorithms(perOp, K::AllReduce) == std::vector<A>{A::Tree})
        << "allreduce entry";
    EXPECT_TRUE(nccl::AllowedAlgorithms(perOp, K::AllGather) == std::vector<A>{A::Ring})
        << "the first entry for the rest";
    const std::string notRing = "^ring;allreduce:ring";
    EXPECT_TRUE(nccl::AllowedAlgorithms(notRing, K::AllReduce) == std::vector<A>{A::Ring});
    EXPECT_TRUE(nccl::AllowedAlgorithms(notRing, K::ReduceScatter) ==
                (std::vector<A>{A::Tree, A::Nvls, A::NvlsTree}));
    EXPECT_TRUE(nccl::AllowedAlgorithms("AllReduce:NVLS", K::AllReduce) == std::vector<A>{A::Nvls})
        << "case-insensitive prefix";
    // NCCL_ALGO does not reach NCCL's point-to-point path.
    EXPECT_TRUE(nccl::AllowedAlgorithms("NVLS", K::AllToAll) == std::vector<A>{A::Ring});
    EXPECT_TRUE(nccl::AllowedAlgorithms("tree", K::SendRecv) == std::vector<A>{A::Ring});

    auto protos = nccl::AllowedProtocols("^LL", K::AllReduce);
    ASSERT_EQ(protos.size(), 2U) << "^LL leaves two";
    EXPECT_TRUE(protos[0] == P::LL128 && protos[1] == P::Simple) << "LL128, Simple";
    EXPECT_EQ(nccl::AllowedProtocols("ll,simple", K::AllGather).size(), 2U) << "a list";
    const std::string ncclProtoExample = "^LL128;allreduce:LL128";
    EXPECT_TRUE(nccl::AllowedProtocols(ncclProtoExample, K::AllReduce) == std::vector<P>{P::LL128});
    EXPECT_EQ(nccl::AllowedProtocols(ncclProtoExample, K::Broadcast).size(), 2U);

    EXPECT_TRUE(Throws("rign", "", "unknown name 'rign'")) << "typo named";
    EXPECT_TRUE(Throws("collnet", "", "unknown name 'collnet'"))
        << "NCCL 2.28 knows CollNetDirect and CollNetChain, not CollNet";
    EXPECT_TRUE(Throws("", "LL256", "NCCL_PROTO: unknown name 'LL256'")) << "protocol typo named";
    EXPECT_TRUE(Throws("allreduse:ring", "", "unknown collective 'allreduse'"))
        << "collective typo named";
    EXPECT_TRUE(Throws("alltoall:ring", "", "unknown collective 'alltoall'"))
        << "no NCCL function of that name";
    EXPECT_TRUE(Throws("allreduce:tree;ring", "", "all entries except the first"))
        << "NCCL: only the first entry may go without a prefix";
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
    treeOnlyForAllReduce.algorithm = "ring;allreduce:tree";
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllReduce, twoNodes, large, treeOnlyForAllReduce)
                    .algorithm == nccl::Algorithm::Tree)
        << "per-collective tree";
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllGather, twoNodes, large, treeOnlyForAllReduce)
                    .algorithm == nccl::Algorithm::Ring)
        << "ring for the rest";
    // NCCL 2.28 has no tree all-gather: NCCL_ALGO=Tree leaves it nothing, and NCCL refuses.
    nccl::Config tree = automatic;
    tree.algorithm = "Tree";
    EXPECT_THROW(nccl::Choose(nccl::CollectiveKind::AllGather, twoNodes, large, tree),
                 std::invalid_argument);
    EXPECT_TRUE(nccl::Choose(nccl::CollectiveKind::AllReduce, {8, 8}, large, tree).algorithm ==
                nccl::Algorithm::Tree)
        << "a tree all-reduce on one node where the spec leaves nothing else";
    // Point-to-point ignores NCCL_ALGO.
    EXPECT_NO_THROW(nccl::Choose(nccl::CollectiveKind::AllToAll, twoNodes, large, tree));
}
