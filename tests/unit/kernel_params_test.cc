// Kernel parameter layouts read from fat binaries nvcc wrote (uncompressed and
// zstd-compressed), and which of a launch's argument values join its profile key.
#include "cuda_abi/elf_sections.h"
#include "cuda_abi/fatbin_cubins.h"
#include "cuda_abi/kernel_params.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>

using namespace phantora::kernel_args;

namespace
{
std::string ReadBytes(const char* file)
{
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string kRows = "_Z9args_rowsPfiifcl";

// What nvcc's generated code hands __cudaRegisterFatBinary.
struct Wrapper
{
    int magic{0x466243b1};
    int version{1};
    const void* data{nullptr};
    void* unused{nullptr};
};
} // namespace

class FatbinLayouts : public ::testing::TestWithParam<const char*>
{
};

TEST_P(FatbinLayouts, EveryParameterIsWhereTheCompilerPutIt)
{
    const auto layouts = ParamLayoutsInImage(ReadBytes(GetParam()));
    ASSERT_EQ(layouts.size(), 2u);
    // args_rows(float*, int, int, float, char, long)
    EXPECT_EQ(layouts.at(kRows), (ParamLayout{{0, 8}, {8, 4}, {12, 4}, {16, 4}, {20, 1}, {24, 8}}));
    // args_mixed(char, short, int, long, double, float*, Five): a 20-byte struct last
    EXPECT_EQ(layouts.at("_Z10args_mixedcsildPf4Five"),
              (ParamLayout{{0, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 20}}));
}

INSTANTIATE_TEST_SUITE_P(Compression, FatbinLayouts,
                         ::testing::Values(PHANTORA_FATBIN_UNCOMPRESSED, PHANTORA_FATBIN_ZSTD));

TEST(FatbinCubins, TheZstdFatbinReallyIsCompressed)
{
    const std::string bytes = ReadBytes(PHANTORA_FATBIN_ZSTD);
    const auto containers = FatbinContainers(bytes);
    ASSERT_EQ(containers.size(), 1u);
    const auto entries = CubinEntries(containers[0]);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].substr(0, 4), std::string_view("\x28\xb5\x2f\xfd", 4));
    const std::string cubin = CubinImage(entries[0]);
    EXPECT_GT(cubin.size(), entries[0].size());
    EXPECT_TRUE(ForEachElfSection(cubin, [](std::string_view, std::string_view) {}));
}

// Bytes from a program we do not own: every cut of a fat binary reads without a crash,
// and a cut that loses the kernel's section loses its layout rather than inventing one.
TEST(FatbinCubins, TruncatedOrDamagedBytesGiveNoLayoutNotACrash)
{
    for (const char* file : {PHANTORA_FATBIN_UNCOMPRESSED, PHANTORA_FATBIN_ZSTD})
    {
        const std::string bytes = ReadBytes(file);
        const auto whole = ParamLayoutsInImage(bytes);
        for (std::size_t cut = 0; cut < bytes.size(); cut += 7)
        {
            for (const auto& [name, layout] : ParamLayoutsInImage(bytes.substr(0, cut)))
            {
                ASSERT_EQ(layout, whole.at(name)) << file << " cut at " << cut;
            }
        }
        std::string flipped = bytes;
        for (std::size_t i = 16; i < flipped.size(); i += 97)
        {
            flipped[i] = static_cast<char>(~flipped[i]);
        }
        ParamLayoutsInImage(flipped); // must return
    }
    EXPECT_TRUE(ParamLayoutsInImage("not a binary").empty());
}

TEST(ArgFacts, SizesAndCountsAreKeptPointersFloatsBytesAndStructsAreNot)
{
    const ParamLayout rows{{0, 8}, {8, 4}, {12, 4}, {16, 4}, {20, 1}, {24, 8}};
    float* x = reinterpret_cast<float*>(uintptr_t{0x7f12'3456'7000});
    int r = 64, cols = 32000;
    float scale = 0.5f;
    char flag = 1;
    long stride = 32000;
    void* args[] = {&x, &r, &cols, &scale, &flag, &stride};
    EXPECT_EQ(ArgFacts(rows, args), "1=64,2=32000,5=32000");
    // negative values and large 8-byte values (pointers, doubles) are left out
    r = -1;
    stride = long{1} << 40;
    EXPECT_EQ(ArgFacts(rows, args), "2=32000");
    EXPECT_EQ(ArgFacts(rows, nullptr), "");
    const ParamLayout mixed{{0, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 20}};
    char c = 7;
    short s = 3;
    int i = 5;
    long l = 9;
    double d = 1.0;
    int five[5] = {1, 2, 3, 4, 5};
    void* margs[] = {&c, &s, &i, &l, &d, &x, five};
    EXPECT_EQ(ArgFacts(mixed, margs), "2=5,3=9"); // not the char: see ArgFacts
}

TEST(KernelParamIndex, AKernelsLayoutIsReadFromItsRegisteredFatbinOnFirstLookup)
{
    const std::string bytes = ReadBytes(PHANTORA_FATBIN_ZSTD);
    const auto containers = FatbinContainers(bytes);
    ASSERT_EQ(containers.size(), 1u);
    Wrapper wrapper;
    wrapper.data = containers[0].data();
    KernelParamIndex index;
    int rowsStub = 0, otherStub = 0, bareStub = 0, junkStub = 0;
    index.Add(&rowsStub, &wrapper, kRows.c_str());
    index.Add(&otherStub, &wrapper, "_Z7missingv");
    index.Add(&bareStub, containers[0].data(), kRows.c_str()); // a container, unwrapped
    const uint32_t junk[4] = {0x12345678, 0, 0, 0};
    index.Add(&junkStub, junk, kRows.c_str());
    const ParamLayout* layout = index.Find(&rowsStub);
    ASSERT_NE(layout, nullptr);
    EXPECT_EQ(layout->size(), 6u);
    EXPECT_EQ(index.Find(&bareStub), layout);
    EXPECT_EQ(index.Find(&otherStub), nullptr);
    EXPECT_EQ(index.Find(&junkStub), nullptr);
    EXPECT_EQ(index.Find(&wrapper), nullptr); // never added
    float* x = nullptr;
    int r = 64, cols = 400;
    float scale = 2.0f;
    char flag = 0;
    long stride = 400;
    void* args[] = {&x, &r, &cols, &scale, &flag, &stride};
    EXPECT_EQ(index.Facts(&rowsStub, args), "0=0,1=64,2=400,5=400");
    EXPECT_EQ(index.Facts(&otherStub, args), "");
}
