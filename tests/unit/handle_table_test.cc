#include "handle_table.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace phantora::interposer;

// Nothing runs at exit: a hook called from another library's static destructor finds the
// table as it was.
static_assert(std::is_trivially_destructible_v<HandleTable<int, std::string>>);

namespace phantora::interposer::test
{

// A hook reached from a static constructor that runs before the table's definition: with a
// table that needed a constructor of its own, the entry would be made in an object not yet
// built, then wiped when it is.
extern HandleTable<int, std::string> g_lateTable;
struct EarlyUser
{
    EarlyUser()
    {
        g_lateTable.Insert(7, std::make_unique<std::string>("from a static constructor"));
    }
};
EarlyUser g_earlyUser;
constinit HandleTable<int, std::string> g_lateTable;

} // namespace phantora::interposer::test

TEST(HandleTable, UsableFromAStaticConstructorThatRunsFirst)
{
    const std::string* s = test::g_lateTable.Find(7);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(*s, "from a static constructor");
}

TEST(HandleTable, AnEmptyTableFindsNothing)
{
    HandleTable<int, std::string> t;
    EXPECT_EQ(t.Find(0), nullptr);
    EXPECT_EQ(t.Find(42), nullptr);
    EXPECT_EQ(t.Take(42), nullptr);
    EXPECT_FALSE(t.Erase(42));
    EXPECT_EQ(t.Size(), 0U);
}

TEST(HandleTable, InsertFindTakeErase)
{
    HandleTable<int, std::string> t;
    std::string* a = t.Insert(1, std::make_unique<std::string>("a"));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(t.Find(1), a);
    // A handle in use keeps its object.
    EXPECT_EQ(t.Insert(1, std::make_unique<std::string>("other")), nullptr);
    EXPECT_EQ(*t.Find(1), "a");
    t.Insert(2, std::make_unique<std::string>("b"));
    EXPECT_EQ(t.Size(), 2U);

    std::unique_ptr<std::string> taken = t.Take(1);
    ASSERT_NE(taken, nullptr);
    EXPECT_EQ(taken.get(), a); // the object itself, not a copy
    EXPECT_EQ(t.Find(1), nullptr);
    EXPECT_TRUE(t.Erase(2));
    EXPECT_FALSE(t.Erase(2));
    EXPECT_EQ(t.Size(), 0U);
}

struct Context
{
    int value{0};
};

TEST(HandleTable, AdoptedObjectsAreTheirOwnHandles)
{
    HandleTable<Context*, Context> t;
    auto owned = std::make_unique<Context>();
    Context* expected = owned.get();
    Context* handle = t.Adopt(std::move(owned));
    EXPECT_EQ(handle, expected);
    EXPECT_EQ(t.Find(handle), expected);
    Context other;
    EXPECT_EQ(t.Find(&other), nullptr);
}

TEST(HandleTable, ManyThreadsCreateFindAndDestroy)
{
    constexpr int kThreads = 8;
    constexpr int kPerThread = 2000;
    HandleTable<Context*, Context> t;
    std::vector<std::vector<Context*>> kept(kThreads);
    std::vector<int> failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
    {
        threads.emplace_back(
            [&, i]
            {
                for (int k = 0; k < kPerThread; ++k)
                {
                    auto c = std::make_unique<Context>();
                    c->value = i * kPerThread + k;
                    Context* h = t.Adopt(std::move(c));
                    Context* found = t.Find(h);
                    if (found != h || found->value != i * kPerThread + k)
                    {
                        ++failures[i];
                    }
                    // Every other one is destroyed again at once.
                    if (k % 2 == 1)
                    {
                        failures[i] += t.Erase(h) ? 0 : 1;
                        failures[i] += t.Find(h) == nullptr ? 0 : 1;
                    }
                    else
                    {
                        kept[i].push_back(h);
                    }
                }
            });
    }
    for (auto& th : threads)
    {
        th.join();
    }
    for (int i = 0; i < kThreads; ++i)
    {
        EXPECT_EQ(failures[i], 0) << "thread " << i;
    }
    EXPECT_EQ(t.Size(), static_cast<std::size_t>(kThreads * kPerThread / 2));
    for (int i = 0; i < kThreads; ++i)
    {
        for (std::size_t k = 0; k < kept[i].size(); ++k)
        {
            Context* c = t.Find(kept[i][k]);
            ASSERT_NE(c, nullptr);
            EXPECT_EQ(c->value, i * kPerThread + static_cast<int>(2 * k));
        }
    }
}
