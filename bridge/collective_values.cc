#include "collective_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace phantora
{

namespace
{

float HalfToFloat(uint16_t h)
{
    const uint32_t sign = (h >> 15) & 1U;
    const uint32_t exp = (h >> 10) & 0x1FU;
    const uint32_t man = h & 0x3FFU;
    float v = 0;
    if (exp == 0)
    {
        v = std::ldexp(static_cast<float>(man), -24);
    }
    else if (exp == 31)
    {
        v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    }
    else
    {
        v = std::ldexp(static_cast<float>(man | 0x400U), static_cast<int>(exp) - 25);
    }
    return sign ? -v : v;
}

uint16_t FloatToHalf(float f)
{
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000U);
    if (std::isnan(f))
    {
        return static_cast<uint16_t>(sign | 0x7E00U);
    }
    const float a = std::fabs(f);
    if (a >= 65520.0f) // rounds to infinity
    {
        return static_cast<uint16_t>(sign | 0x7C00U);
    }
    if (a < std::ldexp(1.0f, -14)) // subnormal: multiples of 2^-24, ties to even
    {
        const float q = std::nearbyint(std::ldexp(a, 24));
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
    }
    int e = 0;
    const float m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    // 11 significant bits: a = q * 2^(e - 11)
    float q = std::nearbyint(std::ldexp(m, 11));
    if (q >= 2048.0f)
    {
        q /= 2;
        ++e;
    }
    const uint32_t exp = static_cast<uint32_t>(e - 1 + 15);
    if (exp >= 31)
    {
        return static_cast<uint16_t>(sign | 0x7C00U);
    }
    return static_cast<uint16_t>(sign | (exp << 10) | (static_cast<uint32_t>(q) & 0x3FFU));
}

float Bf16ToFloat(uint16_t b)
{
    return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t FloatToBf16(float f)
{
    uint32_t x = std::bit_cast<uint32_t>(f);
    if (std::isnan(f))
    {
        return static_cast<uint16_t>((x >> 16) | 0x40U);
    }
    x += 0x7FFFU + ((x >> 16) & 1U); // round to nearest even
    return static_cast<uint16_t>(x >> 16);
}

template <class T> T Combine(wire::RedOp op, T a, T b)
{
    switch (op)
    {
    case wire::RedOp::Sum:
    case wire::RedOp::Avg:
        return static_cast<T>(a + b);
    case wire::RedOp::Prod:
        return static_cast<T>(a * b);
    case wire::RedOp::Max:
        return std::max(a, b);
    case wire::RedOp::Min:
        return std::min(a, b);
    case wire::RedOp::PreMulSum: // Reduce refuses it: its scalar is not on the wire
        break;
    }
    return a;
}

/// Reduces elements stored as \p Stored, computed in \p Compute.
template <class Stored, class Compute, class Load, class StoreFn>
std::string ReduceAs(wire::RedOp op, const std::vector<std::string>& inputs, Load load,
                     StoreFn store)
{
    const std::size_t n = inputs[0].size() / sizeof(Stored);
    std::string out(inputs[0].size(), '\0');
    for (std::size_t i = 0; i < n; ++i)
    {
        Compute acc{};
        for (std::size_t r = 0; r < inputs.size(); ++r)
        {
            Stored s;
            std::memcpy(&s, inputs[r].data() + i * sizeof(Stored), sizeof(Stored));
            const Compute v = load(s);
            acc = r == 0 ? v : Combine<Compute>(op, acc, v);
        }
        if (op == wire::RedOp::Avg)
        {
            acc = static_cast<Compute>(acc / static_cast<Compute>(inputs.size()));
        }
        const Stored s = store(acc);
        std::memcpy(out.data() + i * sizeof(Stored), &s, sizeof(Stored));
    }
    return out;
}

template <class T> std::string ReducePlain(wire::RedOp op, const std::vector<std::string>& inputs)
{
    return ReduceAs<T, T>(
        op, inputs, [](T v) { return v; }, [](T v) { return v; });
}

} // namespace

std::size_t DataTypeBytes(wire::DataType t)
{
    switch (t)
    {
    case wire::DataType::Int8:
    case wire::DataType::Uint8:
    case wire::DataType::Float8e4m3:
    case wire::DataType::Float8e5m2:
        return 1;
    case wire::DataType::Float16:
    case wire::DataType::Bfloat16:
        return 2;
    case wire::DataType::Int32:
    case wire::DataType::Uint32:
    case wire::DataType::Float32:
        return 4;
    case wire::DataType::Int64:
    case wire::DataType::Uint64:
    case wire::DataType::Float64:
        return 8;
    }
    return 0;
}

std::optional<std::string> Reduce(wire::DataType type, wire::RedOp op,
                                  const std::vector<std::string>& inputs)
{
    const std::size_t elem = DataTypeBytes(type);
    if (inputs.empty() || elem == 0 || inputs[0].size() % elem != 0 ||
        static_cast<uint8_t>(op) > static_cast<uint8_t>(wire::RedOp::Avg))
    {
        return std::nullopt;
    }
    for (const auto& in : inputs)
    {
        if (in.size() != inputs[0].size())
        {
            return std::nullopt;
        }
    }
    switch (type)
    {
    case wire::DataType::Int8:
        return ReducePlain<int8_t>(op, inputs);
    case wire::DataType::Uint8:
        return ReducePlain<uint8_t>(op, inputs);
    case wire::DataType::Int32:
        return ReducePlain<int32_t>(op, inputs);
    case wire::DataType::Uint32:
        return ReducePlain<uint32_t>(op, inputs);
    case wire::DataType::Int64:
        return ReducePlain<int64_t>(op, inputs);
    case wire::DataType::Uint64:
        return ReducePlain<uint64_t>(op, inputs);
    case wire::DataType::Float32:
        return ReducePlain<float>(op, inputs);
    case wire::DataType::Float64:
        return ReducePlain<double>(op, inputs);
    case wire::DataType::Float16:
        return ReduceAs<uint16_t, float>(op, inputs, HalfToFloat, FloatToHalf);
    case wire::DataType::Bfloat16:
        return ReduceAs<uint16_t, float>(op, inputs, Bf16ToFloat, FloatToBf16);
    case wire::DataType::Float8e4m3:
    case wire::DataType::Float8e5m2:
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<std::optional<std::string>> CollectiveResults(wire::CollectiveOp op,
                                                          wire::DataType type, wire::RedOp redOp,
                                                          int root,
                                                          const std::vector<std::string>& inputs)
{
    const std::size_t n = inputs.size();
    std::vector<std::optional<std::string>> out(n);
    if (n == 0 || root < 0 || static_cast<std::size_t>(root) >= n)
    {
        return out;
    }
    const std::size_t size = inputs[0].size();
    const bool sameSizes = std::all_of(inputs.begin(), inputs.end(),
                                       [&](const std::string& s) { return s.size() == size; });
    switch (op)
    {
    case wire::CollectiveOp::AllReduce:
    case wire::CollectiveOp::Reduce:
    {
        auto r = Reduce(type, redOp, inputs);
        if (!r)
        {
            return out;
        }
        for (std::size_t i = 0; i < n; ++i)
        {
            if (op == wire::CollectiveOp::AllReduce || i == static_cast<std::size_t>(root))
            {
                out[i] = *r;
            }
        }
        return out;
    }
    case wire::CollectiveOp::AllGather:
    {
        if (!sameSizes)
        {
            return out;
        }
        std::string all;
        for (const auto& in : inputs)
        {
            all += in;
        }
        std::fill(out.begin(), out.end(), all);
        return out;
    }
    case wire::CollectiveOp::ReduceScatter:
    {
        const std::size_t elem = DataTypeBytes(type);
        if (elem == 0 || size % (n * elem) != 0)
        {
            return out;
        }
        auto r = Reduce(type, redOp, inputs);
        if (!r)
        {
            return out;
        }
        const std::size_t block = size / n;
        for (std::size_t i = 0; i < n; ++i)
        {
            out[i] = r->substr(i * block, block);
        }
        return out;
    }
    case wire::CollectiveOp::Broadcast:
        std::fill(out.begin(), out.end(), inputs[static_cast<std::size_t>(root)]);
        return out;
    case wire::CollectiveOp::AllToAll:
    {
        if (!sameSizes || size % n != 0)
        {
            return out;
        }
        const std::size_t block = size / n;
        for (std::size_t i = 0; i < n; ++i)
        {
            std::string mine;
            for (std::size_t j = 0; j < n; ++j)
            {
                mine += inputs[j].substr(i * block, block);
            }
            out[i] = std::move(mine);
        }
        return out;
    }
    case wire::CollectiveOp::SendRecv:
        // Point-to-point travels as NcclP2P, never as a collective with values.
        return out;
    }
    return out;
}

} // namespace phantora
