#include "cuda_abi/real_symbol.h"
#include "gpu_profiler/recorder_real_symbol.h"

#include <array>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <string>
#include <unistd.h>

using namespace phantora;

TEST(RealSymbol, FindsALibcFunctionInTheLibrariesAfterTheCaller)
{
    void* p = real_symbol::Find({.name = "getpid"});
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(real_symbol::As<pid_t (*)()>(p)(), getpid());
    EXPECT_EQ(real_symbol::Require({.name = "getpid"}), p);
}

TEST(RealSymbol, PrefersTheVersionAsked)
{
    // glibc keeps pthread_cond_wait@GLIBC_2.2.5 (another ABI) beside @GLIBC_2.3.2.
    void* expected = dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
    if (!expected)
    {
        GTEST_SKIP() << "no pthread_cond_wait@GLIBC_2.3.2 in this libc";
    }
    EXPECT_EQ(real_symbol::Find({.name = "pthread_cond_wait", .version = "GLIBC_2.3.2"}), expected);
    // A version nobody has: any version will do.
    EXPECT_NE(real_symbol::Find({.name = "getppid", .version = "PHANTORA_NO_SUCH_VERSION"}),
              nullptr);
}

TEST(RealSymbol, LooksInLibrariesLoadedLocallyWhenNamed)
{
    // As Python loads PyTorch's libraries: not in the global scope.
    void* lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
    {
        GTEST_SKIP() << "libzstd.so.1 cannot be loaded here";
    }
    const char* name = "ZSTD_versionNumber";
    if (dlsym(RTLD_NEXT, name))
    {
        GTEST_SKIP() << "libzstd is in the global scope of this test already";
    }
    EXPECT_EQ(real_symbol::Find({.name = name}), nullptr);
    const std::array<const char*, 2> sonames{"libphantora-no-such.so", "libzstd.so.1"};
    void* p = real_symbol::Find({.name = name, .sonames = sonames});
    EXPECT_EQ(p, dlsym(lib, name));
    // Found once, the address is kept by name.
    EXPECT_EQ(real_symbol::Find({.name = name}), p);
}

TEST(RealSymbol, AMissingRequiredSymbolIsNamed)
{
    const std::array<const char*, 1> sonames{"libphantora-no-such.so"};
    try
    {
        real_symbol::Require({.name = "phantora_no_such_symbol", .sonames = sonames});
        FAIL() << "a symbol no library has was found";
    }
    catch (const real_symbol::MissingSymbol& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("phantora_no_such_symbol"), std::string::npos) << what;
        EXPECT_NE(what.find("libphantora-no-such.so"), std::string::npos) << what;
    }
    EXPECT_EQ(real_symbol::Find({.name = "phantora_no_such_symbol"}), nullptr);
}

TEST(RealSymbolDeathTest, TheRecorderEndsNamingAMissingSymbol)
{
    EXPECT_DEATH(recorder::RealSymbol<void (*)()>("phantora_recorder_no_such", {"libnope.so.1"}),
                 "phantora recorder: cannot find the real phantora_recorder_no_such.*libnope.so.1");
}
