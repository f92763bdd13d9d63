#include "convolution_work.h"

#include "gpu_model/profile/gemm_signature.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace phantora
{

namespace
{
double Product(const std::vector<int64_t>& dims, std::size_t from)
{
    return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(from), dims.end(), 1.0,
                           [](double a, int64_t d) { return a * static_cast<double>(d); });
}
} // namespace

const char* ConvolutionPassName(ConvolutionWork::Pass p)
{
    switch (p)
    {
    case ConvolutionWork::Pass::Forward:
        return "forward";
    case ConvolutionWork::Pass::BackwardData:
        return "backward data";
    case ConvolutionWork::Pass::BackwardFilter:
        return "backward filter";
    }
    return "?";
}

std::optional<ConvolutionWork> ConvolutionWork::Of(const profile::CudnnSignature& s)
{
    if (s.Class() != profile::CudnnOpClass::Convolution)
        return std::nullopt;
    const auto x = s.Dims("x"), w = s.Dims("w"), y = s.Dims("y");
    if (x.size() < 3 || w.size() != x.size() || y.size() != x.size() || w[1] <= 0)
        return std::nullopt;
    ConvolutionWork c;
    c.pass = s.api == "cudnnConvFprop"   ? Pass::Forward
             : s.api == "cudnnConvDgrad" ? Pass::BackwardData
                                         : Pass::BackwardFilter;
    c.batch = static_cast<double>(x[0]);
    c.inChannels = static_cast<double>(x[1]);
    c.outChannels = static_cast<double>(w[0]);
    c.groups = std::max(1.0, c.inChannels / static_cast<double>(w[1]));
    c.filter = Product(w, 2);
    c.inPixels = Product(x, 2);
    c.outPixels = Product(y, 2);
    c.type = s.Type();
    const std::string* layout = s.Field("layout");
    c.channelsLast = layout && (*layout == "nhwc" || *layout == "ndhwc");
    return c;
}

bool ConvolutionWork::Depthwise() const
{
    return groups > 1 && inChannels / groups <= 1 && outChannels / groups <= 1;
}

double ConvolutionWork::Flops() const
{
    return 2.0 * batch * outChannels * outPixels * (inChannels / groups) * filter;
}

double ConvolutionWork::GemmM() const
{
    switch (pass)
    {
    case Pass::Forward:
        return batch * outPixels;
    case Pass::BackwardData:
        return batch * inPixels;
    case Pass::BackwardFilter:
        return outChannels / groups;
    }
    return 0;
}

double ConvolutionWork::GemmN() const
{
    switch (pass)
    {
    case Pass::Forward:
        return outChannels / groups;
    case Pass::BackwardData:
        return inChannels / groups;
    case Pass::BackwardFilter:
        return inChannels / groups * filter;
    }
    return 0;
}

double ConvolutionWork::GemmK() const
{
    switch (pass)
    {
    case Pass::Forward:
        return inChannels / groups * filter;
    case Pass::BackwardData:
        return outChannels / groups * filter * outPixels / std::max(inPixels, 1.0);
    case Pass::BackwardFilter:
        return batch * outPixels;
    }
    return 0;
}

double ConvolutionWork::TensorCoreFlops() const
{
    const double elementBytes = std::max(profile::DataTypeBytes(type), 1.0);
    const double vector = 16.0 / elementBytes;
    const double perGroup = inChannels / groups;
    return Flops() * std::ceil(perGroup / vector) * vector / std::max(perGroup, 1.0);
}

bool ConvolutionWork::SmallChannels() const
{
    const double elementBytes = std::max(profile::DataTypeBytes(type), 1.0);
    return !Depthwise() && inChannels / groups < 16.0 / elementBytes;
}

bool ConvolutionWork::Pointwise() const
{
    return filter == 1 && inPixels == outPixels;
}

double ConvolutionWork::TileEfficiency(int smCount) const
{
    const auto fill = [](double d) { return d / (std::ceil(d / kTile) * kTile); };
    const double m = std::max(GemmM(), 1.0), n = std::max(GemmN(), 1.0);
    double e = fill(m) * fill(n);
    if (pass != Pass::BackwardFilter)
    {
        const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile) * groups;
        const double sms = std::max(smCount, 1);
        e *= tiles / (std::ceil(tiles / sms) * sms);
    }
    return e;
}

double ConvolutionWork::Bytes() const
{
    const double e = profile::DataTypeBytes(type);
    const double x = batch * inChannels * inPixels;
    const double w = outChannels * (inChannels / groups) * filter;
    const double y = batch * outChannels * outPixels;
    const double transposed = channelsLast || Depthwise() || Pointwise() ? 0.0 : 2.0 * (x + y);
    return e * (x + w + y + transposed);
}

std::string ConvolutionWork::GemmType() const
{
    return type == "f32" ? "bf16" : type;
}

double ConvolutionWork::GemmTimeScale() const
{
    return type == "f32" ? 2.0 : 1.0;
}

} // namespace phantora
