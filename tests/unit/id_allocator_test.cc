#include "id_allocator.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;

namespace
{

constexpr IdKind kKinds[] = {IdKind::EventRecord,     IdKind::HostFunctionRecord,
                             IdKind::HostFunction,    IdKind::Stream,
                             IdKind::PerThreadStream, IdKind::PhysicalChunk};

} // namespace

TEST(IdAllocator, SpacesOfOneFieldAreDisjoint)
{
    for (const IdSpace& a : id_space::kAll)
    {
        for (const IdSpace& b : id_space::kAll)
        {
            if (&a != &b)
            {
                EXPECT_FALSE(Overlap(a, b)) << a.name << " and " << b.name;
            }
        }
    }
    // Overlap itself: the same range overlaps within a field, not across fields.
    const IdSpace records{"r", IdField::Record, 10, 20, 1};
    EXPECT_TRUE(Overlap(records, IdSpace{"r2", IdField::Record, 19, 30, 1}));
    EXPECT_FALSE(Overlap(records, IdSpace{"r3", IdField::Record, 20, 30, 1}));
    EXPECT_FALSE(Overlap(records, IdSpace{"h", IdField::HostFunction, 10, 20, 1}));
}

TEST(IdAllocator, EachKindDrawsFromItsOwnSpaceAlone)
{
    for (IdKind kind : kKinds)
    {
        const IdSpace& own = SpaceOf(kind);
        const uint64_t id = NewId(kind);
        EXPECT_TRUE(own.Contains(id)) << own.name << ": " << id;
        for (const IdSpace& other : id_space::kAll)
        {
            if (other.name != own.name && other.field == own.field)
            {
                EXPECT_FALSE(other.Contains(id))
                    << own.name << " gave " << id << ", in " << other.name;
            }
        }
    }
}

// The values the bridge has always received.
TEST(IdAllocator, WireValuesAreUnchanged)
{
    IdAllocator events(id_space::kEventRecords);
    EXPECT_EQ(events.Next(), 1U); // 0 means "never recorded"
    EXPECT_EQ(events.Next(), 2U);
    IdAllocator hostRecords(id_space::kHostFunctionRecords);
    EXPECT_EQ(hostRecords.Next(), uint64_t{1} << 62);
    EXPECT_LT(hostRecords.Next(), uint64_t{1} << 63); // the bridge's implicit records above
    IdAllocator holds(id_space::kHostFunctions);
    EXPECT_EQ(holds.Next(), 1U);
    IdAllocator streams(id_space::kStreams);
    const uint64_t first = streams.Next();
    EXPECT_EQ(first, wire::kFirstStream);
    EXPECT_EQ(streams.Next(), wire::kFirstStream + wire::kStreamStep);
    EXPECT_FALSE(wire::IsNonBlocking(first));
    EXPECT_TRUE(wire::IsNonBlocking(first | wire::kNonBlockingBit));
    EXPECT_TRUE(streams.Space().Contains(first)); // the flag is read apart from the id
    IdAllocator perThread(id_space::kPerThreadStreams);
    EXPECT_EQ(perThread.Next(), wire::kFirstPerThreadStream);
    EXPECT_EQ(perThread.Next(), wire::kFirstPerThreadStream + wire::kStreamStep);
}

TEST(IdAllocator, IdsAreUniqueAcrossThreads)
{
    constexpr int kThreads = 8;
    constexpr int kPerThread = 10000;
    std::vector<std::vector<uint64_t>> got(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
    {
        threads.emplace_back(
            [&, i]
            {
                for (int k = 0; k < kPerThread; ++k)
                {
                    got[i].push_back(NewId(IdKind::HostFunction));
                }
            });
    }
    for (auto& t : threads)
    {
        t.join();
    }
    std::set<uint64_t> all;
    for (const auto& ids : got)
    {
        // Each thread sees its own ids in increasing order.
        EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
        all.insert(ids.begin(), ids.end());
    }
    EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kPerThread));
    EXPECT_TRUE(id_space::kHostFunctions.Contains(*all.begin()));
}

TEST(IdAllocator, AnExhaustedSpaceSaysWhichOne)
{
    IdAllocator tiny(IdSpace{"tiny test ids", IdField::Record, 10, 16, 2});
    EXPECT_EQ(tiny.Space().Capacity(), 3U);
    EXPECT_EQ(tiny.Next(), 10U);
    EXPECT_EQ(tiny.Next(), 12U);
    EXPECT_EQ(tiny.Next(), 14U);
    try
    {
        tiny.Next();
        FAIL() << "a fourth id from a space of three";
    }
    catch (const std::length_error& e)
    {
        EXPECT_NE(std::string(e.what()).find("tiny test ids"), std::string::npos) << e.what();
    }
}
