// What a cuDNN convolution (cudnn_signature.h: cudnnConvFprop / Dgrad / Wgrad) asks of
// the GPU, from its signature alone: the implicit GEMM cuDNN's tensor-core engines run it
// as, the flops its tensor cores spend (channels padded to their operand width), and the
// bytes it moves through HBM.  OpEstimator prices that work on the profile's measured
// GEMM and bandwidth curves (op_estimator.cc ConvolutionNs; gpu_model/README.md has
// the measured errors).
#pragma once

#include "gpu_model/profile/cudnn_signature.h"

#include <cstdint>
#include <optional>
#include <string>

namespace phantora
{

struct ConvolutionWork
{
    enum class Pass : uint8_t
    {
        Forward,        ///< cudnnConvFprop: y from x and w
        BackwardData,   ///< cudnnConvDgrad: dx from dy and w
        BackwardFilter, ///< cudnnConvWgrad: dw from x and dy
    };

    Pass pass{Pass::Forward};
    double batch{0};       ///< N
    double inChannels{0};  ///< C
    double outChannels{0}; ///< K
    double groups{1};      ///< C / (the filter's input channels)
    double filter{0};      ///< R*S (R*S*T in 3-d)
    double inPixels{0};    ///< H*W of x
    double outPixels{0};   ///< P*Q of y
    std::string type;      ///< operand type ("bf16", "f16", "f32")
    bool channelsLast{false};

    /// nullopt for a signature that is no convolution.
    static std::optional<ConvolutionWork> Of(const profile::CudnnSignature& s);

    /// One input and one output channel per group (ConvNeXt's 7x7, MobileNet's 3x3): no
    /// GEMM to give tensor cores, cuDNN runs these on the CUDA cores.
    bool Depthwise() const;
    /// 2*N*K*P*Q*(C/groups)*R*S, whatever the pass.
    double Flops() const;
    /// The implicit GEMM's dimensions per group (m x n, summed over k): forward
    /// (N*P*Q) x K over C*R*S; backward data (N*H*W) x C over K*R*S*(P*Q)/(H*W);
    /// backward filter K x (C*R*S) over N*P*Q.
    double GemmM() const;
    double GemmN() const;
    double GemmK() const;
    /// Flops the tensor cores spend: the input channels padded to one 16-byte operand
    /// vector (8 bf16/f16 or 4 tf32 values), as cuDNN pads a first layer's 3 channels.
    double TensorCoreFlops() const;
    /// Fewer input channels per group than one 16-byte operand vector holds (a first
    /// layer's 3 colours): cuDNN cannot feed these to its tensor-core implicit GEMM as it
    /// does wider layers, and runs them several times slower per flop.
    bool SmallChannels() const;
    /// A 1x1 convolution of stride 1: in NCHW it is already a GEMM per image (the
    /// weights times a C x H*W matrix), with no layout to change.
    bool Pointwise() const;
    /// x, w and y each once through HBM; an NCHW convolution on tensor cores (not a
    /// pointwise one) also transposes x and y to and from channels-last (each read and
    /// written once more).
    double Bytes() const;
    /// The share of the tensor cores the implicit GEMM keeps busy, in tiles of
    /// kTile x kTile outputs, one per SM at a time: the part of its edge tiles that
    /// holds outputs (64 output channels fill half a tile) and, but for backward filter
    /// passes (whose long N*P*Q sum cuDNN splits across SMs), the part of its last wave
    /// of tiles that has SMs to run on.  The profile's GEMMs that price the flops are
    /// mostly large ones that fill both.
    double TileEfficiency(int smCount) const;
    static constexpr double kTile = 128;
    /// The type whose measured GEMMs time the implicit GEMM: f32 convolutions run on
    /// TF32 tensor cores (PyTorch's default, torch.backends.cudnn.allow_tf32), whose MMA
    /// issues at half bf16's rate on Ampere and Hopper: the bf16 GEMMs, at twice the time
    /// (GemmTimeScale).
    std::string GemmType() const;
    double GemmTimeScale() const;
};

const char* ConvolutionPassName(ConvolutionWork::Pass p);

} // namespace phantora
