#include "units.h"

#include <gtest/gtest.h>

using namespace phantora;

TEST(Units, BitRates)
{
    EXPECT_DOUBLE_EQ(*ParseBitRate("400Gbps"), 400e9);
    EXPECT_DOUBLE_EQ(*ParseBitRate("400Gb/s"), 400e9);
    EXPECT_DOUBLE_EQ(*ParseBitRate("26.5GB/s"), 26.5e9 * 8);
    EXPECT_DOUBLE_EQ(*ParseBitRate("1KiBps"), 1024.0 * 8);
    EXPECT_DOUBLE_EQ(*ParseBitRate("10 Mbps"), 10e6);
    EXPECT_FALSE(ParseBitRate("fast"));
    EXPECT_FALSE(ParseBitRate("400"));
    EXPECT_FALSE(ParseBitRate("400Gbit"));
}

TEST(Units, Durations)
{
    EXPECT_DOUBLE_EQ(*ParseDurationNs("1.5us"), 1500.0);
    EXPECT_DOUBLE_EQ(*ParseDurationNs("250ns"), 250.0);
    EXPECT_DOUBLE_EQ(*ParseDurationNs("2ms"), 2e6);
    EXPECT_DOUBLE_EQ(*ParseDurationNs("0.1s"), 1e8);
    EXPECT_DOUBLE_EQ(*ParseDurationNs("500ps"), 0.5);
    EXPECT_FALSE(ParseDurationNs("1 minute"));
    EXPECT_FALSE(ParseDurationNs("us"));
}

TEST(Units, Bytes)
{
    EXPECT_EQ(*ParseBytes("141GiB"), 141ULL << 30);
    EXPECT_EQ(*ParseBytes("80GB"), 80000000000ULL);
    EXPECT_EQ(*ParseBytes("4096"), 4096U);
    EXPECT_EQ(*ParseBytes("4KiB"), 4096U);
    EXPECT_FALSE(ParseBytes("-1GiB"));
    EXPECT_FALSE(ParseBytes("4 apples"));
}
