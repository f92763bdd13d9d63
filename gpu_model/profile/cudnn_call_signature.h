// The signature (cudnn_signature.h) of a cuDNN execute, computed from the descriptors the
// program built: compiled into both the simulator's interposer and the recorder, so a
// call simulated and the same call recorded on a real GPU meet on one profile key.
//
// Graphs recognised (everything else is not simulated, and says which ops it holds):
//   - attention, as cudnn-frontend builds it: the composite graph (two matmuls forward,
//     four or more backward, around a softmax of pointwise and reduction ops, with the
//     causal mask's row/column index comparison, dropout's RNG, a bias or sequence-length
//     padding) or the unified SDPA forward operation;
//   - one convolution (forward, backward data or backward filter), with pointwise ops
//     after it (bias, activation: the signature's epilogue).
// Legacy calls (batch norm) are named from their tensor descriptor's dims and strides.
#pragma once

#include "cudnn_descriptor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phantora::cudnn
{

struct GraphSignature
{
    std::string name;        ///< the op's signature; empty when not simulated
    std::string unsupported; ///< otherwise, what the graph holds that is not simulated
    /// The workspace the plan asks for (CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE), a
    /// deterministic model: none.  Attention's scratch memory is in the graph already:
    /// cudnn-frontend (9.x) makes the backward pass's float32 dQ accumulator and softmax
    /// row sums graph tensors in its own share of the workspace, which the program adds
    /// to this one; convolutions get the implicit-GEMM engines Hopper's heuristics rank
    /// first, which need none.  The recorder prints the real size per signature.
    int64_t workspaceBytes{0};
};

/// \p graph is a CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, its operations and their tensors
/// set with a DescriptorResolver (each descriptor reads the ones it refers to).
GraphSignature SignatureOfGraph(const BackendDescriptor& graph);

/// The attribute through which an engine, engine configuration, heuristics query or
/// execution plan refers to what it runs (its operation graph, engine, configuration):
/// each carries the signature of the graph at the end of that chain.  nullopt for other
/// descriptors.
std::optional<cudnnBackendAttributeName_t> RunsAttribute(cudnnBackendDescriptorType_t type);

/// The short name of a cuDNN data type ("bf16", "f32", ...), as GEMM signatures name
/// CUDA's.
const char* DataTypeName(cudnnDataType_t type);

/// "nchw" or "nhwc" (and the 3-d "ncdhw" / "ndhwc"), from an NC(D)HW tensor's strides:
/// channels last when channels are innermost.
std::string ImageLayout(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

/// cudnnBatchNormFwdTraining(...), cudnnBatchNormFwdInference(...), cudnnBatchNormBwd(...)
/// of an NC(D)HW input.  \p mode and \p ops are cudnnBatchNormMode_t and
/// cudnnBatchNormOps_t values (deprecated types, which this header keeps out of its
/// includers' sight).
std::string BatchNormSignature(const char* api, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides, cudnnDataType_t type, int mode,
                               int ops);

} // namespace phantora::cudnn
