#include "never_destroyed.h"

#include <atomic>
#include <gtest/gtest.h>
#include <set>
#include <thread>
#include <vector>

using namespace phantora::interposer;

namespace
{

std::atomic<int> g_built{0};

struct Counted
{
    Counted() { ++g_built; }
    int value{5};
};

constinit NeverDestroyed<Counted> g_counted;

} // namespace

TEST(NeverDestroyed, BuildsItsObjectOnFirstUseOnly)
{
    EXPECT_EQ(g_built.load(), 0); // constant-initialised: nothing ran before main
    Counted& c = g_counted.Get();
    EXPECT_EQ(g_built.load(), 1);
    EXPECT_EQ(c.value, 5);
    c.value = 9;
    EXPECT_EQ(g_counted->value, 9);
    EXPECT_EQ(&*g_counted, &c);
    EXPECT_EQ(g_built.load(), 1);
}

TEST(NeverDestroyed, ThreadsThatRaceToBuildItShareOneObject)
{
    for (int round = 0; round < 20; ++round)
    {
        NeverDestroyed<std::vector<int>> shared;
        std::vector<std::vector<int>*> seen(8, nullptr);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < seen.size(); ++i)
        {
            threads.emplace_back([&, i] { seen[i] = &shared.Get(); });
        }
        for (auto& t : threads)
        {
            t.join();
        }
        EXPECT_EQ(std::set<std::vector<int>*>(seen.begin(), seen.end()).size(), 1U);
        EXPECT_EQ(seen[0], &shared.Get());
    }
}
