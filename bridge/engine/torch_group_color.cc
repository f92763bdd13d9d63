#include "engine/torch_group_color.h"

namespace phantora
{

namespace
{

// CPython's Objects/tupleobject.c (tuplehash) and Include/pyhash.h, 64-bit.
constexpr uint64_t kPrime1 = 11400714785074694791ULL;
constexpr uint64_t kPrime2 = 14029467366897019727ULL;
constexpr uint64_t kPrime5 = 2870177450012600261ULL;
constexpr uint64_t kModulus = (uint64_t{1} << 61) - 1; // hash(int) is the int mod 2**61-1

uint64_t IntHash(int64_t v)
{
    const bool negative = v < 0;
    const uint64_t magnitude = negative ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
    int64_t h = static_cast<int64_t>(magnitude % kModulus);
    if (negative)
    {
        h = -h;
    }
    return static_cast<uint64_t>(h == -1 ? -2 : h); // -1 is CPython's error value
}

} // namespace

int32_t TorchGroupColor(const std::vector<int>& ranks)
{
    uint64_t acc = kPrime5;
    for (int r : ranks)
    {
        acc += IntHash(r) * kPrime2;
        acc = (acc << 31) | (acc >> 33);
        acc *= kPrime1;
    }
    acc += static_cast<uint64_t>(ranks.size()) ^ (kPrime5 ^ 3527539ULL);
    int64_t hash = acc == ~uint64_t{0} ? 1546275796 : static_cast<int64_t>(acc);
    // abs() of a Python int: exact, so INT64_MIN's magnitude is 2**63 (0 modulo 2**31)
    const uint64_t magnitude =
        hash < 0 ? uint64_t{0} - static_cast<uint64_t>(hash) : static_cast<uint64_t>(hash);
    return static_cast<int32_t>(magnitude % (uint64_t{1} << 31));
}

} // namespace phantora
