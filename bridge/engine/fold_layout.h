// Rank folding (docs/folding.md): one live process per model-parallel coordinate stands
// for all its data-parallel replicas.  The world of N ranks is laid out as torch's and
// Megatron's device meshes are, in row-major order
//     rank = inner + stride * replica + stride * replicas * outer,   inner < stride,
// where the folded dimension (data-parallel, or FSDP's shard or replicate dimension) has
// `replicas` entries and `stride` is the product of the sizes of the dimensions inside it
// (TP x CP for Megatron's tp-cp-ep-dp-pp order with PP > 1; 1 for plain DDP).  Replica 0
// of every coordinate is live; the others are absent and answered for by it.
#pragma once

#include <string>
#include <vector>

namespace phantora
{

class FoldLayout
{
public:
    /// No folding: every rank of \p worldSize is live.
    explicit FoldLayout(int worldSize = 1);
    /// \p worldSize ranks whose dimension of \p replicas entries, \p stride ranks apart,
    /// is folded.  Throws std::invalid_argument naming what does not divide.
    FoldLayout(int worldSize, int replicas, int stride);

    bool Folds() const { return m_replicas > 1; }
    int WorldSize() const { return m_worldSize; }
    int Replicas() const { return m_replicas; }
    int Stride() const { return m_stride; }
    /// Live processes: WorldSize() / Replicas().
    int LiveCount() const { return m_worldSize / m_replicas; }

    /// The replica \p rank belongs to (0: live).
    int ReplicaOf(int rank) const { return (rank / m_stride) % m_replicas; }
    bool IsLive(int rank) const { return ReplicaOf(rank) == 0; }
    /// The live rank that stands for \p rank (itself when live).
    int Representative(int rank) const { return rank - m_stride * ReplicaOf(rank); }
    /// \p live's coordinate in replica \p replica.
    int InReplica(int live, int replica) const { return live + m_stride * replica; }
    /// A layout that folds nothing, for any world size.
    static const FoldLayout& None();
    /// The live ranks, ascending.
    std::vector<int> LiveRanks() const;
    /// "16 ranks as 1 live x 16 replicas (stride 1)".
    std::string Describe() const;

private:
    int m_worldSize;
    int m_replicas{1};
    int m_stride{1};
};

} // namespace phantora
