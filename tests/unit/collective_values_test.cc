#include "collective_values.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace phantora;
using wire::CollectiveOp;
using wire::DataType;
using wire::RedOp;

namespace
{

template <class T> std::string Bytes(std::initializer_list<T> values)
{
    std::string s(values.size() * sizeof(T), '\0');
    std::memcpy(s.data(), std::data(values), s.size());
    return s;
}

template <class T> std::vector<T> Values(const std::string& s)
{
    std::vector<T> v(s.size() / sizeof(T));
    std::memcpy(v.data(), s.data(), s.size());
    return v;
}

} // namespace

TEST(CollectiveValues, ReducesEveryIntegerAndFloatType)
{
    const std::vector<std::string> i32 = {Bytes<int32_t>({1, -5, 7}), Bytes<int32_t>({2, 3, -9}),
                                          Bytes<int32_t>({4, 1, 0})};
    EXPECT_EQ(Values<int32_t>(*Reduce(DataType::Int32, RedOp::Sum, i32)),
              (std::vector<int32_t>{7, -1, -2}));
    EXPECT_EQ(Values<int32_t>(*Reduce(DataType::Int32, RedOp::Prod, i32)),
              (std::vector<int32_t>{8, -15, 0}));
    EXPECT_EQ(Values<int32_t>(*Reduce(DataType::Int32, RedOp::Max, i32)),
              (std::vector<int32_t>{4, 3, 7}));
    EXPECT_EQ(Values<int32_t>(*Reduce(DataType::Int32, RedOp::Min, i32)),
              (std::vector<int32_t>{1, -5, -9}));
    EXPECT_EQ(Values<int32_t>(*Reduce(DataType::Int32, RedOp::Avg, i32)),
              (std::vector<int32_t>{2, 0, 0})); // truncating division

    EXPECT_EQ(Values<uint8_t>(*Reduce(DataType::Uint8, RedOp::Sum,
                                      {Bytes<uint8_t>({200, 1}), Bytes<uint8_t>({100, 2})})),
              (std::vector<uint8_t>{44, 3})); // wraps as uint8 does
    EXPECT_EQ(Values<int64_t>(*Reduce(DataType::Int64, RedOp::Max,
                                      {Bytes<int64_t>({-(1LL << 40)}), Bytes<int64_t>({-1})})),
              (std::vector<int64_t>{-1}));
    EXPECT_EQ(Values<uint64_t>(*Reduce(DataType::Uint64, RedOp::Min,
                                       {Bytes<uint64_t>({~0ULL}), Bytes<uint64_t>({3})})),
              (std::vector<uint64_t>{3}));
    EXPECT_EQ(Values<float>(*Reduce(DataType::Float32, RedOp::Avg,
                                    {Bytes<float>({1.0f, 2.0f}), Bytes<float>({2.0f, 5.0f})})),
              (std::vector<float>{1.5f, 3.5f}));
    EXPECT_EQ(Values<double>(*Reduce(DataType::Float64, RedOp::Prod,
                                     {Bytes<double>({1.5}), Bytes<double>({-4.0})})),
              (std::vector<double>{-6.0}));
}

TEST(CollectiveValues, ReducesHalfAndBfloat16InFloatAndRoundsToNearestEven)
{
    // fp16: 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200, 0.5 = 0x3800, -2.0 = 0xC000
    EXPECT_EQ(Values<uint16_t>(
                  *Reduce(DataType::Float16, RedOp::Sum,
                          {Bytes<uint16_t>({0x3C00, 0x3800}), Bytes<uint16_t>({0x4000, 0xC000})})),
              (std::vector<uint16_t>{0x4200, 0xBE00})); // 3.0, -1.5
    // 2048 + 1 is not representable in fp16 (spacing 2): ties to even gives 2048.
    EXPECT_EQ(Values<uint16_t>(*Reduce(DataType::Float16, RedOp::Sum,
                                       {Bytes<uint16_t>({0x6800}), Bytes<uint16_t>({0x3C00})})),
              (std::vector<uint16_t>{0x6800}));
    // subnormal halves: 2^-24 + 2^-24 = 2^-23
    EXPECT_EQ(Values<uint16_t>(*Reduce(DataType::Float16, RedOp::Sum,
                                       {Bytes<uint16_t>({0x0001}), Bytes<uint16_t>({0x0001})})),
              (std::vector<uint16_t>{0x0002}));
    // overflow: 60000 + 60000 is infinity
    EXPECT_EQ(Values<uint16_t>(*Reduce(DataType::Float16, RedOp::Sum,
                                       {Bytes<uint16_t>({0x7B53}), Bytes<uint16_t>({0x7B53})})),
              (std::vector<uint16_t>{0x7C00}));
    // bf16: 1.0 = 0x3F80, 3.0 = 0x4040, max(1, 3) = 3; 1 + 2^-8 rounds to 1 (ties to even)
    EXPECT_EQ(Values<uint16_t>(*Reduce(DataType::Bfloat16, RedOp::Max,
                                       {Bytes<uint16_t>({0x3F80}), Bytes<uint16_t>({0x4040})})),
              (std::vector<uint16_t>{0x4040}));
    EXPECT_EQ(Values<uint16_t>(*Reduce(DataType::Bfloat16, RedOp::Sum,
                                       {Bytes<uint16_t>({0x3F80}), Bytes<uint16_t>({0x3B80})})),
              (std::vector<uint16_t>{0x3F80}));
}

TEST(CollectiveValues, RefusesWhatItCannotReduce)
{
    EXPECT_FALSE(Reduce(DataType::Float8e4m3, RedOp::Sum, {"a", "b"}));
    EXPECT_FALSE(Reduce(DataType::Int32, RedOp::Sum, {"abcd", "ab"}));
    EXPECT_FALSE(Reduce(DataType::Int32, RedOp::Sum, {"abc", "abc"}));
    EXPECT_FALSE(Reduce(DataType::Int32, RedOp::Sum, {}));
}

TEST(CollectiveValues, EachOperationGivesEachMemberWhatNcclWould)
{
    const std::vector<std::string> in = {Bytes<int32_t>({1, 2}), Bytes<int32_t>({10, 20}),
                                         Bytes<int32_t>({100, 200})};
    auto gathered = CollectiveResults(CollectiveOp::AllGather, DataType::Int32, RedOp::Sum, 0, in);
    for (const auto& g : gathered)
    {
        EXPECT_EQ(Values<int32_t>(*g), (std::vector<int32_t>{1, 2, 10, 20, 100, 200}));
    }
    auto reduced = CollectiveResults(CollectiveOp::AllReduce, DataType::Int32, RedOp::Sum, 0, in);
    for (const auto& r : reduced)
    {
        EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{111, 222}));
    }
    auto atRoot = CollectiveResults(CollectiveOp::Reduce, DataType::Int32, RedOp::Max, 2, in);
    EXPECT_FALSE(atRoot[0]);
    EXPECT_FALSE(atRoot[1]);
    EXPECT_EQ(Values<int32_t>(*atRoot[2]), (std::vector<int32_t>{100, 200}));
    auto cast = CollectiveResults(CollectiveOp::Broadcast, DataType::Int32, RedOp::Sum, 1,
                                  {"", Bytes<int32_t>({7, 8}), ""});
    for (const auto& c : cast)
    {
        EXPECT_EQ(Values<int32_t>(*c), (std::vector<int32_t>{7, 8}));
    }
    const std::vector<std::string> two = {Bytes<int32_t>({1, 2, 3, 4}),
                                          Bytes<int32_t>({10, 20, 30, 40})};
    auto scattered =
        CollectiveResults(CollectiveOp::ReduceScatter, DataType::Int32, RedOp::Sum, 0, two);
    EXPECT_EQ(Values<int32_t>(*scattered[0]), (std::vector<int32_t>{11, 22}));
    EXPECT_EQ(Values<int32_t>(*scattered[1]), (std::vector<int32_t>{33, 44}));
    auto exchanged = CollectiveResults(CollectiveOp::AllToAll, DataType::Int32, RedOp::Sum, 0, two);
    EXPECT_EQ(Values<int32_t>(*exchanged[0]), (std::vector<int32_t>{1, 2, 10, 20}));
    EXPECT_EQ(Values<int32_t>(*exchanged[1]), (std::vector<int32_t>{3, 4, 30, 40}));
    // sizes that do not fit: nobody learns anything
    auto bad = CollectiveResults(CollectiveOp::AllGather, DataType::Int32, RedOp::Sum, 0,
                                 {Bytes<int32_t>({1}), Bytes<int32_t>({1, 2})});
    EXPECT_FALSE(bad[0]);
    EXPECT_FALSE(bad[1]);
}
