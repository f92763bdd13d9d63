// Which host memory the program pinned (pinned_host_memory.h): copies from it are
// estimated apart from pageable ones.
#include "pinned_host_memory.h"

#include <gtest/gtest.h>
#include <vector>

using phantora::interposer::PinnedHostMemory;

TEST(PinnedHostMemory, RangesAreKnownUntilFreed)
{
    PinnedHostMemory m;
    std::vector<char> pinned(4096), other(64);
    m.Add(pinned.data(), pinned.size());
    EXPECT_TRUE(m.Contains(pinned.data()));
    EXPECT_TRUE(m.Contains(pinned.data() + 4095));
    EXPECT_FALSE(m.Contains(pinned.data() + 4096));
    EXPECT_FALSE(m.Contains(other.data()));
    EXPECT_TRUE(m.Remove(pinned.data()));
    EXPECT_FALSE(m.Contains(pinned.data()));
    EXPECT_FALSE(m.Remove(pinned.data()));
}
