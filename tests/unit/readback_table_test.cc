// Recorded read-back values (host_time/readback_table.h): what a recorded read is keyed
// by, which value a key returns, which reads "float" serves, and how a lookup falls back.
#include "host_time/readback_table.h"

#include <cstring>
#include <gtest/gtest.h>
#include <limits>

using namespace phantora::host_time;

namespace
{

template <class T> std::string Bytes(T v)
{
    std::string s(sizeof v, '\0');
    std::memcpy(s.data(), &v, sizeof v);
    return s;
}

template <class T> T Value(const std::string& s)
{
    T v{};
    EXPECT_EQ(s.size(), sizeof v);
    std::memcpy(&v, s.data(), sizeof v);
    return v;
}

// An optimizer step as the recorder sees it: the gradient norm's kernel, its read (.item():
// an asynchronous copy and a stream synchronisation), the scaling kernel, then the loss
// read from the same site of the same library.
const std::vector<std::string> kStep = {
    "launch:l2norm@libtorch_cuda.so+0x10", "copy:async@libtorch_cuda.so+0x20",
    "sync:stream@libtorch_cuda.so+0x30",   "launch:scale@libtorch_cuda.so+0x40",
    "launch:loss@libtorch_cuda.so+0x50",   "copy:async@libtorch_cuda.so+0x20",
    "sync:stream@libtorch_cuda.so+0x30",
};
constexpr std::size_t kNormRead = 1;
constexpr std::size_t kLossRead = 5;

/// A step without reads (so that every read's last 8 calls are the same), then
/// \p norms.size() steps; step i reads norms[i] and losses[i] (float32).
Sequence Steps(const std::vector<float>& norms, const std::vector<float>& losses)
{
    Sequence s;
    s.labels = kStep;
    s.gapBeforeNs.assign(kStep.size(), 1000);
    for (std::size_t step = 0; step < norms.size(); ++step)
    {
        const std::size_t base = s.labels.size();
        for (const auto& l : kStep)
        {
            s.labels.push_back(l);
            s.gapBeforeNs.push_back(1000);
        }
        s.reads[base + kNormRead] = Bytes(norms[step]);
        s.reads[base + kLossRead] = Bytes(losses[step]);
    }
    return s;
}

/// The context of a read made by the last of \p labels.
Context After(const std::vector<std::string>& labels)
{
    Context c;
    for (const auto& l : labels)
    {
        c.Push(HostLabel::FromText(l));
    }
    return c;
}

/// A step's calls up to and including its read at \p read, after a previous step.
std::vector<std::string> UpTo(std::size_t read)
{
    std::vector<std::string> labels = kStep;
    labels.insert(labels.end(), kStep.begin(), kStep.begin() + static_cast<long>(read) + 1);
    return labels;
}

} // namespace

TEST(ReadbackTable, EachReadReturnsTheMedianOfWhatItReadOnTheGpu)
{
    const auto table = ReadbackTable::Build(
        {Steps({9.0f, 2.5f, 3.0f, 2.75f, 2.0f}, {7.1f, 7.0f, 6.9f, 6.8f, 6.7f})});
    EXPECT_EQ(table.Reads(), 10u);
    const auto* norm = table.Lookup(After(UpTo(kNormRead)), 4);
    ASSERT_NE(norm, nullptr);
    // The first step's 9.0 does not pull it: the median of 9, 2.5, 3, 2.75, 2 is 2.75.
    EXPECT_EQ(Value<float>(norm->bytes), 2.75f);
    EXPECT_TRUE(norm->floatLike);
    EXPECT_FALSE(norm->stable);
    EXPECT_EQ(norm->samples, 5u);
    const auto* loss = table.Lookup(After(UpTo(kLossRead)), 4);
    ASSERT_NE(loss, nullptr);
    EXPECT_EQ(Value<float>(loss->bytes), 6.9f);
    // Another size at the same call was never read there.
    EXPECT_EQ(table.Lookup(After(UpTo(kNormRead)), 8), nullptr);
    // Nor is a call that is no read.
    EXPECT_EQ(table.Lookup(After(UpTo(kNormRead + 1)), 4), nullptr);
}

TEST(ReadbackTable, AnotherBuildOfTheLibraryFindsTheReadByModule)
{
    const auto table = ReadbackTable::Build({Steps({2.0f, 2.0f, 2.0f}, {5.0f, 5.0f, 5.0f})});
    // The same calls at other offsets (another build of libtorch_cuda.so): found by module.
    std::vector<std::string> moved = UpTo(kNormRead);
    for (auto& l : moved)
    {
        l = l.substr(0, l.find('+')) + "+0x9999";
    }
    const auto* norm = table.Lookup(After(moved), 4);
    ASSERT_NE(norm, nullptr);
    EXPECT_EQ(Value<float>(norm->bytes), 2.0f);
    EXPECT_TRUE(norm->stable);
}

TEST(ReadbackTable, AShorterKeyStandingForReadsOfOtherValuesIsNotServed)
{
    const auto table = ReadbackTable::Build({Steps({2.0f, 2.0f, 2.0f}, {5.0f, 5.0f, 5.0f})});
    // A call the recording never made right before the norm's read (an all-reduce over
    // ranks): the only keys left are the copy alone, which both reads share with different
    // values, so neither is returned.
    std::vector<std::string> labels = UpTo(kNormRead);
    labels.insert(labels.end() - 1, "nccl:AllReduce@libtorch_cuda.so+0x60");
    EXPECT_EQ(table.Lookup(After(labels), 4), nullptr);
    // With equal values the shorter key is unambiguous and serves the read.
    const auto same = ReadbackTable::Build({Steps({2.0f, 2.0f, 2.0f}, {2.0f, 2.0f, 2.0f})});
    const auto* hit = same.Lookup(After(labels), 4);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(Value<float>(hit->bytes), 2.0f);
}

TEST(ReadbackTable, IntegersAreServedOnlyWhenAllReadsAre)
{
    Sequence s;
    const std::vector<int64_t> counts = {0, 0, 0, 0, 7, 5, 7, 3}; // the first four: no read
    for (int64_t c : counts)
    {
        s.labels.push_back("launch:count_nonzero@libtorch_cuda.so+0x70");
        s.gapBeforeNs.push_back(100);
        s.labels.push_back("copy:async@libtorch_cuda.so+0x20");
        s.gapBeforeNs.push_back(100);
        if (c != 0)
        {
            s.reads[s.labels.size() - 1] = Bytes(c);
        }
    }
    const auto table = ReadbackTable::Build({s});
    const Context read =
        After({"launch:count_nonzero@libtorch_cuda.so+0x70", "copy:async@libtorch_cuda.so+0x20"});
    const auto* hit = table.Lookup(read, 8);
    ASSERT_NE(hit, nullptr);
    EXPECT_FALSE(hit->floatLike);
    EXPECT_EQ(Value<int64_t>(hit->bytes), 7); // the most frequent
    EXPECT_EQ(table.Filtered(ReadbackMode::Float).Lookup(read, 8), nullptr);
    ASSERT_NE(table.Filtered(ReadbackMode::All).Lookup(read, 8), nullptr);
    EXPECT_TRUE(table.Filtered(ReadbackMode::Zeros).Empty());
    EXPECT_EQ(table.Filtered(ReadbackMode::Zeros).Reads(), 4u);
}

TEST(ReadbackTable, FloatWidthTellsFloatsFromSmallIntegers)
{
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(2.5f)), 4u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(0.1)), 8u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(-1e-20f)), 4u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(uint16_t{0x3f80})), 2u); // bfloat16 1.0
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(int32_t{5})), 0u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(int64_t{1} << 40)), 0u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(int16_t{3})), 0u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(std::numeric_limits<float>::infinity())), 0u);
    EXPECT_EQ(ReadbackTable::FloatWidth(Bytes(std::numeric_limits<double>::quiet_NaN())), 0u);
    EXPECT_EQ(ReadbackTable::FloatWidth(std::string(1, '\1')), 0u); // a bool
    EXPECT_EQ(ReadbackTable::FloatWidth(std::string(8, '\0')), 8u); // zero is any float
}

TEST(ReadbackTable, SerializesAndRejectsWhatItDidNotWrite)
{
    const auto table = ReadbackTable::Build({Steps({2.0f, 3.0f, 4.0f}, {5.0f, 6.0f, 7.0f})});
    const std::string bytes = table.Serialize();
    const auto back = ReadbackTable::Parse(bytes);
    EXPECT_EQ(back.Keys(), table.Keys());
    EXPECT_EQ(back.Reads(), table.Reads());
    EXPECT_EQ(back.Serialize(), bytes);
    const auto* norm = back.Lookup(After(UpTo(kNormRead)), 4);
    ASSERT_NE(norm, nullptr);
    EXPECT_EQ(Value<float>(norm->bytes), 3.0f);
    EXPECT_TRUE(ReadbackTable::Parse("").Empty());
    EXPECT_THROW(ReadbackTable::Parse("HGT2...."), std::invalid_argument);
    EXPECT_THROW(ReadbackTable::Parse(bytes.substr(0, bytes.size() - 1)), std::invalid_argument);
    Sequence bad;
    bad.labels = {"copy:sync@x+0x1"};
    bad.gapBeforeNs = {-1};
    bad.reads[3] = "abcd";
    EXPECT_THROW(ReadbackTable::Build({bad}), std::invalid_argument);
}
