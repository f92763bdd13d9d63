#include "cudnn_signature.h"

#include "gemm_signature.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <numeric>

namespace phantora::profile
{

namespace
{

struct ApiInfo
{
    std::string_view api;
    CudnnOpClass cls;
};

constexpr ApiInfo kApis[] = {
    {"cudnnSdpaFprop", CudnnOpClass::Attention},
    {"cudnnSdpaBprop", CudnnOpClass::Attention},
    {"cudnnConvFprop", CudnnOpClass::Convolution},
    {"cudnnConvDgrad", CudnnOpClass::Convolution},
    {"cudnnConvWgrad", CudnnOpClass::Convolution},
    {"cudnnBatchNormFwdTraining", CudnnOpClass::Normalization},
    {"cudnnBatchNormFwdInference", CudnnOpClass::Normalization},
    {"cudnnBatchNormBwd", CudnnOpClass::Normalization},
};

constexpr std::string_view kAttentionShape[] = {"b", "h", "h_kv", "s_q", "s_kv", "d_qk", "d_v"};
constexpr std::string_view kConvolutionShape[] = {"x", "w", "y"};
constexpr std::string_view kNormalizationShape[] = {"x"};

template <std::size_t N> bool In(const std::string_view (&keys)[N], std::string_view key)
{
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

bool IsShapeKey(CudnnOpClass cls, std::string_view key)
{
    switch (cls)
    {
    case CudnnOpClass::Attention:
        return In(kAttentionShape, key);
    case CudnnOpClass::Convolution:
        return In(kConvolutionShape, key);
    case CudnnOpClass::Normalization:
        return In(kNormalizationShape, key);
    }
    return false;
}

std::optional<int64_t> ParseInt(std::string_view s)
{
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || v < 0)
    {
        return std::nullopt;
    }
    return v;
}

double Product(const std::vector<int64_t>& dims)
{
    return std::accumulate(dims.begin(), dims.end(), 1.0,
                           [](double a, int64_t d) { return a * static_cast<double>(d); });
}

} // namespace

std::string JoinDims(const std::vector<int64_t>& dims)
{
    return fmt::format("{}", fmt::join(dims, "x"));
}

std::optional<CudnnOpClass> CudnnSignature::ClassOf(std::string_view api)
{
    for (const ApiInfo& a : kApis)
    {
        if (a.api == api)
        {
            return a.cls;
        }
    }
    return std::nullopt;
}

const std::string* CudnnSignature::Field(std::string_view key) const
{
    for (const auto& [k, v] : fields)
    {
        if (k == key)
        {
            return &v;
        }
    }
    return nullptr;
}

std::optional<int64_t> CudnnSignature::Int(std::string_view key) const
{
    const std::string* v = Field(key);
    return v ? ParseInt(*v) : std::nullopt;
}

std::vector<int64_t> CudnnSignature::Dims(std::string_view key) const
{
    const std::string* v = Field(key);
    std::vector<int64_t> dims;
    if (!v || v->empty())
    {
        return dims;
    }
    std::string_view rest = *v;
    while (true)
    {
        const auto x = rest.find('x');
        auto d = ParseInt(rest.substr(0, x));
        if (!d)
        {
            return {};
        }
        dims.push_back(*d);
        if (x == std::string_view::npos)
        {
            return dims;
        }
        rest = rest.substr(x + 1);
    }
}

std::string CudnnSignature::Type() const
{
    const std::string* t = Field("type");
    return t ? *t : std::string();
}

double CudnnSignature::Flops() const
{
    switch (Class())
    {
    case CudnnOpClass::Attention:
    {
        const double f = 2.0 * static_cast<double>(*Int("b")) * static_cast<double>(*Int("h")) *
                         static_cast<double>(*Int("s_q")) * static_cast<double>(*Int("s_kv")) *
                         static_cast<double>(*Int("d_qk") + *Int("d_v"));
        const double causal = Int("causal").value_or(0) ? 0.5 : 1.0;
        const double pass = api == "cudnnSdpaBprop" ? 2.5 : 1.0;
        return f * causal * pass;
    }
    case CudnnOpClass::Convolution:
    {
        const auto w = Dims("w");
        // every output element of every output channel sums C/groups * R * S products
        return 2.0 * Product(Dims("y")) * Product(w) / std::max(1.0, static_cast<double>(w[0]));
    }
    case CudnnOpClass::Normalization:
        return 0.0;
    }
    return 0.0;
}

double CudnnSignature::Bytes() const
{
    const double e = DataTypeBytes(Type());
    switch (Class())
    {
    case CudnnOpClass::Attention:
    {
        const double b = static_cast<double>(*Int("b")), h = static_cast<double>(*Int("h")),
                     hkv = static_cast<double>(*Int("h_kv")), sq = static_cast<double>(*Int("s_q")),
                     skv = static_cast<double>(*Int("s_kv")),
                     dqk = static_cast<double>(*Int("d_qk")), dv = static_cast<double>(*Int("d_v"));
        // Q, K, V in and O out; the backward pass also reads dO and O and writes dQ, dK, dV
        const double once = b * (h * sq * dqk + hkv * skv * (dqk + dv) + h * sq * dv);
        return e * once * (api == "cudnnSdpaBprop" ? 2.0 : 1.0);
    }
    case CudnnOpClass::Convolution:
        return e * (Product(Dims("x")) + Product(Dims("w")) + Product(Dims("y")));
    case CudnnOpClass::Normalization:
    {
        const double passes = api == "cudnnBatchNormFwdTraining"    ? 3.0
                              : api == "cudnnBatchNormFwdInference" ? 2.0
                                                                    : 5.0;
        return e * passes * Product(Dims("x"));
    }
    }
    return 0.0;
}

std::string CudnnSignature::Family() const
{
    std::string out = api + "(";
    bool first = true;
    for (const auto& [k, v] : fields)
    {
        if (IsShapeKey(Class(), k))
        {
            continue;
        }
        out += fmt::format("{}{}={}", first ? "" : ",", k, v);
        first = false;
    }
    return out + ")";
}

std::vector<double> CudnnSignature::Shape() const
{
    std::vector<double> out;
    for (const auto& [k, v] : fields)
    {
        if (!IsShapeKey(Class(), k))
        {
            continue;
        }
        if (Class() == CudnnOpClass::Attention)
        {
            out.push_back(static_cast<double>(*Int(k)));
        }
        else
        {
            for (int64_t d : Dims(k))
            {
                out.push_back(static_cast<double>(d));
            }
        }
    }
    return out;
}

std::string CudnnSignature::Name() const
{
    std::string out = api + "(";
    for (std::size_t i = 0; i < fields.size(); ++i)
    {
        out += fmt::format("{}{}={}", i ? "," : "", fields[i].first, fields[i].second);
    }
    return out + ")";
}

std::optional<CudnnSignature> CudnnSignature::Parse(std::string_view name)
{
    const auto open = name.find('(');
    if (open == std::string_view::npos || !name.ends_with(')'))
    {
        return std::nullopt;
    }
    CudnnSignature s;
    s.api = std::string(name.substr(0, open));
    const auto cls = ClassOf(s.api);
    if (!cls)
    {
        return std::nullopt;
    }
    std::string_view rest = name.substr(open + 1, name.size() - open - 2);
    while (!rest.empty())
    {
        const auto comma = rest.find(',');
        const std::string_view field = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const auto eq = field.find('=');
        if (eq == std::string_view::npos || eq == 0)
        {
            return std::nullopt;
        }
        s.fields.emplace_back(std::string(field.substr(0, eq)), std::string(field.substr(eq + 1)));
    }
    if (s.Type().empty())
    {
        return std::nullopt;
    }
    switch (*cls)
    {
    case CudnnOpClass::Attention:
        for (std::string_view k : kAttentionShape)
        {
            if (!s.Int(k))
            {
                return std::nullopt;
            }
        }
        break;
    case CudnnOpClass::Convolution:
    {
        const auto x = s.Dims("x"), w = s.Dims("w"), y = s.Dims("y");
        if (x.size() < 3 || w.size() != x.size() || y.size() != x.size())
        {
            return std::nullopt;
        }
        break;
    }
    case CudnnOpClass::Normalization:
        if (s.Dims("x").size() < 2)
        {
            return std::nullopt;
        }
        break;
    }
    return s;
}

} // namespace phantora::profile
