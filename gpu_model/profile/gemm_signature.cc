#include "gemm_signature.h"

#include <charconv>
#include <fmt/format.h>

namespace phantora::profile
{

double DataTypeBytes(std::string_view t)
{
    if (t == "f64")
        return 8;
    if (t == "f32" || t == "i32")
        return 4;
    if (t == "bf16" || t == "f16")
        return 2;
    if (t == "e4m3" || t == "e5m2" || t == "i8")
        return 1;
    return 0;
}

double GemmSignature::Flops() const
{
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch);
}

double GemmSignature::Bytes() const
{
    const double mm = static_cast<double>(m), nn = static_cast<double>(n),
                 kk = static_cast<double>(k);
    return static_cast<double>(batch) *
           (mm * kk * DataTypeBytes(a) + kk * nn * DataTypeBytes(b) + mm * nn * DataTypeBytes(c));
}

std::string GemmSignature::Family() const
{
    return fmt::format("{}(op={}{},a={},b={},c={},epilogue={})", api, opA, opB, a, b, c, epilogue);
}

std::string GemmSignature::Name() const
{
    std::string s = fmt::format("{}(m={},n={},k={},op={}{},a={},b={},c={},batch={}", api, m, n, k,
                                opA, opB, a, b, c, batch);
    if (epilogue >= 0)
    {
        s += fmt::format(",epilogue={}", epilogue);
    }
    return s + ")";
}

std::optional<GemmSignature> GemmSignature::Parse(std::string_view name)
{
    const auto open = name.find('(');
    if (open == std::string_view::npos || !name.ends_with(')'))
    {
        return std::nullopt;
    }
    GemmSignature g;
    g.api = std::string(name.substr(0, open));
    std::string_view rest = name.substr(open + 1, name.size() - open - 2);
    bool haveM = false, haveN = false, haveK = false, haveOp = false;
    while (!rest.empty())
    {
        const auto comma = rest.find(',');
        std::string_view field = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const auto eq = field.find('=');
        if (eq == std::string_view::npos)
        {
            return std::nullopt;
        }
        std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
        auto integer = [&](int64_t& out)
        {
            auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
            return ec == std::errc{} && p == value.data() + value.size() && out >= 0;
        };
        if (key == "m")
            haveM = integer(g.m);
        else if (key == "n")
            haveN = integer(g.n);
        else if (key == "k")
            haveK = integer(g.k);
        else if (key == "batch")
        {
            if (!integer(g.batch))
                return std::nullopt;
        }
        else if (key == "epilogue")
        {
            if (!integer(g.epilogue))
                return std::nullopt;
        }
        else if (key == "op")
        {
            // C (conjugate transpose) appears only with complex types (see
            // cuda_abi/cuda_type_names.h GemmOperationName).
            auto known = [](char c) { return c == 'N' || c == 'T' || c == 'C'; };
            haveOp = value.size() == 2 && known(value[0]) && known(value[1]);
            if (haveOp)
            {
                g.opA = value[0];
                g.opB = value[1];
            }
        }
        else if (key == "a")
            g.a = std::string(value);
        else if (key == "b")
            g.b = std::string(value);
        else if (key == "c")
            g.c = std::string(value);
        else
            return std::nullopt;
    }
    if (!haveM || !haveN || !haveK || !haveOp || g.a.empty() || g.b.empty() || g.c.empty())
    {
        return std::nullopt;
    }
    return g;
}

} // namespace phantora::profile
