// The values of small collectives alone: every member that sent its send buffer reads
// its own result once, computed from all members' buffers; a member that did not send
// (or sent for a different operation) leaves the result unknown.
#include "engine/collective_value_store.h"

#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace phantora;

namespace
{

std::string Int32s(std::vector<int32_t> v)
{
    std::string bytes(v.size() * sizeof(int32_t), '\0');
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
}

wire::NcclCollective Sum(std::vector<int32_t> v)
{
    wire::NcclCollective m;
    m.op = wire::CollectiveOp::AllReduce;
    m.dataType = wire::DataType::Int32;
    m.redOp = wire::RedOp::Sum;
    m.bytes = v.size() * sizeof(int32_t);
    m.hasValues = true;
    m.values = Int32s(std::move(v));
    return m;
}

constexpr uint64_t kComm = 0x10;

} // namespace

TEST(CollectiveValueStore, EachMemberReadsTheResultOnce)
{
    CollectiveValueStore store;
    EXPECT_FALSE(store.Holds(kComm, 0));
    store.Offer(kComm, 0, 2, 0, Sum({1, 20}));
    store.Offer(kComm, 0, 2, 1, Sum({2, 30}));
    ASSERT_TRUE(store.Holds(kComm, 0));
    EXPECT_FALSE(store.Holds(kComm, 1)) << "another collective";

    const wire::CollectiveResult first = store.Take(kComm, 0, 1);
    EXPECT_TRUE(first.known);
    EXPECT_EQ(first.values, Int32s({3, 50}));
    EXPECT_TRUE(store.Holds(kComm, 0)) << "member 0 has not read it";
    const wire::CollectiveResult second = store.Take(kComm, 0, 0);
    EXPECT_TRUE(second.known);
    EXPECT_EQ(second.values, Int32s({3, 50}));
    EXPECT_FALSE(store.Holds(kComm, 0)) << "kept after every member read it";
}

TEST(CollectiveValueStore, AMemberWithoutValuesLeavesTheResultUnknown)
{
    CollectiveValueStore store;
    store.Offer(kComm, 4, 3, 0, Sum({1}));
    store.Offer(kComm, 4, 3, 2, Sum({1}));
    const wire::CollectiveResult r = store.Take(kComm, 4, 0);
    EXPECT_FALSE(r.known);
    EXPECT_TRUE(r.values.empty());
}

TEST(CollectiveValueStore, AMemberWhoseCallDisagreesIsLeftOut)
{
    CollectiveValueStore store;
    store.Offer(kComm, 0, 2, 0, Sum({1}));
    wire::NcclCollective max = Sum({5});
    max.redOp = wire::RedOp::Max;
    store.Offer(kComm, 0, 2, 1, max);
    EXPECT_FALSE(store.Take(kComm, 0, 0).known);
    EXPECT_FALSE(store.Holds(kComm, 0)) << "only member 0's values were taken in";
}

TEST(CollectiveValueStore, AReduceWritesOnlyTheRootsBuffer)
{
    CollectiveValueStore store;
    wire::NcclCollective a = Sum({4});
    a.op = wire::CollectiveOp::Reduce;
    a.root = 1;
    wire::NcclCollective b = a;
    b.values = Int32s({6});
    store.Offer(kComm, 0, 2, 0, a);
    store.Offer(kComm, 0, 2, 1, b);
    EXPECT_FALSE(store.Take(kComm, 0, 0).known);
    const wire::CollectiveResult root = store.Take(kComm, 0, 1);
    EXPECT_TRUE(root.known);
    EXPECT_EQ(root.values, Int32s({10}));
}
