#include "cudnn_call_signature.h"

#include "cudnn_signature.h"

#include <algorithm>
#include <array>
#include <cudnn_ops.h>
#include <fmt/format.h>
#include <numeric>
#include <optional>

// The batch-norm modes are deprecated in cuDNN 9; PyTorch still uses them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace phantora::cudnn
{

using profile::CudnnSignature;
using profile::JoinDims;

namespace
{

struct Tensor
{
    int64_t uid{0};
    std::vector<int64_t> dims, strides;
    cudnnDataType_t type{CUDNN_DATA_FLOAT};
    bool isVirtual{false};
    bool byValue{false};

    double Elements() const
    {
        return std::accumulate(dims.begin(), dims.end(), 1.0,
                               [](double a, int64_t d) { return a * static_cast<double>(d); });
    }
};

/// The descriptor an op refers to through \p name (its first element).
const BackendDescriptor* Ref(const BackendDescriptor& d, cudnnBackendAttributeName_t name)
{
    const auto handles = d.Descriptors(name);
    return handles.empty() ? nullptr : d.Resolve(handles.front());
}

std::optional<Tensor> TensorAt(const BackendDescriptor& op, cudnnBackendAttributeName_t name)
{
    const BackendDescriptor* t = Ref(op, name);
    if (!t || t->Type() != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    {
        return std::nullopt;
    }
    Tensor out;
    out.uid = t->Value<int64_t>(CUDNN_ATTR_TENSOR_UNIQUE_ID).value_or(-1);
    out.dims = t->Int64s(CUDNN_ATTR_TENSOR_DIMENSIONS);
    out.strides = t->Int64s(CUDNN_ATTR_TENSOR_STRIDES);
    out.type = t->Enum<cudnnDataType_t>(CUDNN_ATTR_TENSOR_DATA_TYPE).value_or(CUDNN_DATA_FLOAT);
    out.isVirtual = t->Value<bool>(CUDNN_ATTR_TENSOR_IS_VIRTUAL).value_or(false);
    out.byValue = t->Value<bool>(CUDNN_ATTR_TENSOR_IS_BY_VALUE).value_or(false);
    return out;
}

const char* OpTypeName(cudnnBackendDescriptorType_t t)
{
    switch (t)
    {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        return "CONVOLUTION_FORWARD";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        return "CONVOLUTION_BACKWARD_FILTER";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        return "CONVOLUTION_BACKWARD_DATA";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        return "POINTWISE";
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
        return "GEN_STATS";
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        return "MATMUL";
    case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR:
        return "BN_FINALIZE_STATISTICS";
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        return "REDUCTION";
    case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
        return "BN_BWD_WEIGHTS";
    case CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR:
        return "RESAMPLE_FWD";
    case CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR:
        return "RESAMPLE_BWD";
    case CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR:
        return "CONCAT";
    case CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR:
        return "SIGNAL";
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
        return "NORM_FORWARD";
    case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
        return "NORM_BACKWARD";
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
        return "RESHAPE";
    case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
        return "RNG";
    case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
        return "PAGED_CACHE_LOAD";
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        return "SDPA_FWD";
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
        return "SDPA_BWD";
    default:
        return "OPERATION";
    }
}

std::string PointwiseModeName(cudnnPointwiseMode_t m)
{
    switch (m)
    {
    case CUDNN_POINTWISE_ADD:
        return "add";
    case CUDNN_POINTWISE_MUL:
        return "mul";
    case CUDNN_POINTWISE_SUB:
        return "sub";
    case CUDNN_POINTWISE_DIV:
        return "div";
    case CUDNN_POINTWISE_MAX:
        return "max";
    case CUDNN_POINTWISE_MIN:
        return "min";
    case CUDNN_POINTWISE_EXP:
        return "exp";
    case CUDNN_POINTWISE_LOG:
        return "log";
    case CUDNN_POINTWISE_IDENTITY:
        return "identity";
    case CUDNN_POINTWISE_RELU_FWD:
        return "relu";
    case CUDNN_POINTWISE_TANH_FWD:
        return "tanh";
    case CUDNN_POINTWISE_SIGMOID_FWD:
        return "sigmoid";
    case CUDNN_POINTWISE_ELU_FWD:
        return "elu";
    case CUDNN_POINTWISE_GELU_FWD:
        return "gelu";
    case CUDNN_POINTWISE_GELU_APPROX_TANH_FWD:
        return "gelu_tanh";
    case CUDNN_POINTWISE_SWISH_FWD:
        return "swish";
    case CUDNN_POINTWISE_SOFTPLUS_FWD:
        return "softplus";
    case CUDNN_POINTWISE_GEN_INDEX:
        return "gen_index";
    case CUDNN_POINTWISE_BINARY_SELECT:
        return "binary_select";
    default:
        return fmt::format("mode{}", static_cast<int>(m));
    }
}

struct Op
{
    const BackendDescriptor* d{nullptr};
    cudnnBackendDescriptorType_t type{};
    cudnnPointwiseMode_t pwMode{CUDNN_POINTWISE_IDENTITY}; ///< pointwise ops
    int64_t pwAxis{-1};                                    ///< GEN_INDEX
    std::string Describe() const
    {
        if (type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        {
            return fmt::format("POINTWISE({})", PointwiseModeName(pwMode));
        }
        return OpTypeName(type);
    }
};

std::string DescribeOps(const std::vector<Op>& ops)
{
    std::string s;
    for (const Op& op : ops)
    {
        s += (s.empty() ? "" : ", ") + op.Describe();
    }
    return "a cuDNN graph of " + (s.empty() ? std::string("no operations") : s);
}

/// Attention tensors are (b, h, s, d); the layout lists them outermost first, by stride.
std::string AttentionLayout(const Tensor& t)
{
    static constexpr char kLetters[] = "bhsd";
    if (t.dims.size() != 4 || t.strides.size() != 4)
    {
        return "?";
    }
    std::array<int, 4> order{0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return t.strides[a] > t.strides[b]; });
    std::string s;
    for (int i : order)
    {
        s += kLetters[i];
    }
    return s;
}

std::string Flag(bool b)
{
    return b ? "1" : "0";
}

GraphSignature Unsupported(const std::vector<Op>& ops, const std::string& why)
{
    GraphSignature g;
    g.unsupported = DescribeOps(ops) + (why.empty() ? "" : " (" + why + ")");
    return g;
}

struct AttentionShape
{
    int64_t b{0}, h{0}, hKv{0}, sQ{0}, sKv{0}, dQk{0}, dV{0};
    cudnnDataType_t type{CUDNN_DATA_HALF};
    std::string layout;
};

GraphSignature AttentionSignature(bool backward, const AttentionShape& s, bool causal, bool bias,
                                  bool padding, bool dropout, bool scale, bool stats)
{
    CudnnSignature sig;
    sig.api = backward ? "cudnnSdpaBprop" : "cudnnSdpaFprop";
    auto add = [&](const char* k, std::string v) { sig.fields.emplace_back(k, std::move(v)); };
    add("b", std::to_string(s.b));
    add("h", std::to_string(s.h));
    add("h_kv", std::to_string(s.hKv));
    add("s_q", std::to_string(s.sQ));
    add("s_kv", std::to_string(s.sKv));
    add("d_qk", std::to_string(s.dQk));
    add("d_v", std::to_string(s.dV));
    add("type", DataTypeName(s.type));
    add("layout", s.layout);
    add("causal", Flag(causal));
    add("bias", Flag(bias));
    add("padding", Flag(padding));
    add("dropout", Flag(dropout));
    add("scale", Flag(scale));
    if (!backward)
    {
        add("stats", Flag(stats));
    }
    GraphSignature g;
    g.name = sig.Name();
    return g;
}

/// cudnn-frontend's composite attention: Q K^T (both graph inputs), a softmax of
/// pointwise and reduction ops, then P V forward; backward recomputes Q K^T and adds
/// dO V^T (both graph inputs again), dV, dQ and dK.
GraphSignature CompositeAttention(const std::vector<Op>& ops)
{
    struct Matmul
    {
        Tensor a, b, c;
    };
    std::vector<Matmul> matmuls;
    for (const Op& op : ops)
    {
        if (op.type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
        {
            continue;
        }
        auto a = TensorAt(*op.d, CUDNN_ATTR_OPERATION_MATMUL_ADESC);
        auto b = TensorAt(*op.d, CUDNN_ATTR_OPERATION_MATMUL_BDESC);
        auto c = TensorAt(*op.d, CUDNN_ATTR_OPERATION_MATMUL_CDESC);
        if (!a || !b || !c || a->dims.size() != 4 || b->dims.size() != 4 || c->dims.size() != 4)
        {
            return Unsupported(ops, "a matmul whose operands are not 4-d tensors");
        }
        matmuls.push_back({*a, *b, *c});
    }
    const bool backward = matmuls.size() >= 4;
    std::vector<const Matmul*> fromInputs; // both operands read from memory
    for (const Matmul& m : matmuls)
    {
        if (!m.a.isVirtual && !m.b.isVirtual)
        {
            fromInputs.push_back(&m);
        }
    }
    if (fromInputs.size() < (backward ? 2u : 1u))
    {
        return Unsupported(ops, "no Q K^T matmul on the graph's inputs");
    }
    const Matmul& qk = *fromInputs.front();
    AttentionShape s;
    s.b = qk.a.dims[0];
    s.h = qk.a.dims[1];
    s.sQ = qk.a.dims[2];
    s.dQk = qk.a.dims[3];
    s.hKv = qk.b.dims[1];
    s.sKv = qk.b.dims[3];
    s.type = qk.a.type;
    s.layout = AttentionLayout(qk.a);
    if (backward)
    {
        s.dV = fromInputs[1]->a.dims[3]; // dO V^T: dO is (b, h, s_q, d_v)
    }
    else
    {
        const Matmul& pv = &matmuls[0] == &qk ? matmuls[1] : matmuls[0];
        s.dV = pv.b.dims[3]; // P V: V is (b, h_kv, s_kv, d_v)
    }

    bool causal = false, bias = false, padding = false, dropout = false, scale = false,
         stats = false;
    for (const Op& op : ops)
    {
        if (op.type == CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR)
        {
            dropout = true;
            continue;
        }
        if (op.type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
            op.type != CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)
        {
            continue;
        }
        const bool pw = op.type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
        auto x = TensorAt(*op.d, pw ? CUDNN_ATTR_OPERATION_POINTWISE_XDESC
                                    : CUDNN_ATTR_OPERATION_REDUCTION_XDESC);
        auto y = TensorAt(*op.d, pw ? CUDNN_ATTR_OPERATION_POINTWISE_YDESC
                                    : CUDNN_ATTR_OPERATION_REDUCTION_YDESC);
        if (y && !y->isVirtual && y->dims.size() == 4 && y->dims[2] == s.sQ && y->dims[3] == 1)
        {
            stats = true; // the softmax's log-sum-exp per row, kept for the backward pass
        }
        if (!pw)
        {
            continue;
        }
        auto other = TensorAt(*op.d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC);
        // the row index only exists for a mask along the diagonal
        causal = causal || (op.pwMode == CUDNN_POINTWISE_GEN_INDEX && op.pwAxis == 2);
        for (const auto& t : {x, other})
        {
            if (t && !t->isVirtual && t->type == CUDNN_DATA_INT32)
            {
                padding = true; // per-sequence lengths
            }
        }
        const bool scoreShaped = other && !other->isVirtual && !other->byValue &&
                                 other->dims.size() == 4 && other->dims[3] == s.sKv &&
                                 other->Elements() > 1;
        if (op.pwMode == CUDNN_POINTWISE_ADD && scoreShaped)
        {
            bias = true;
        }
        if (op.pwMode == CUDNN_POINTWISE_MUL && scoreShaped && other->dims[2] == s.sQ)
        {
            dropout = true; // a mask the program gives
        }
        if (op.pwMode == CUDNN_POINTWISE_MUL && x && x->uid == qk.c.uid && other &&
            (other->byValue || other->Elements() == 1))
        {
            scale = true;
        }
    }
    return AttentionSignature(backward, s, causal, bias, padding, dropout, scale, stats);
}

GraphSignature UnifiedAttention(const std::vector<Op>& ops, const Op& sdpa)
{
    const bool backward = sdpa.type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR;
    auto q = TensorAt(*sdpa.d, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC
                                        : CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC);
    auto k = TensorAt(*sdpa.d, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC
                                        : CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC);
    auto v = TensorAt(*sdpa.d, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC
                                        : CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC);
    if (!q || !k || !v || q->dims.size() != 4 || k->dims.size() != 4 || v->dims.size() != 4)
    {
        return Unsupported(ops, "the SDPA operation has no 4-d Q, K and V");
    }
    AttentionShape s;
    s.b = q->dims[0];
    s.h = q->dims[1];
    s.sQ = q->dims[2];
    s.dQk = q->dims[3];
    s.hKv = k->dims[1];
    s.sKv = k->dims[2];
    s.dV = v->dims[3];
    s.type = q->type;
    s.layout = AttentionLayout(*q);
    auto has = [&](cudnnBackendAttributeName_t a) { return !sdpa.d->Descriptors(a).empty(); };
    const bool padding = backward ? has(CUDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_QDESC)
                                  : has(CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC);
    const bool scale = backward ? has(CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC)
                                : has(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC);
    const bool stats = !backward && has(CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC);
    if (ops.size() != 1 || (!backward && has(CUDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC)) ||
        (!backward && has(CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC)))
    {
        return Unsupported(ops, "an SDPA operation with a block mask, a page table or other ops");
    }
    return AttentionSignature(backward, s, false, false, padding, false, scale, stats);
}

GraphSignature Convolution(const std::vector<Op>& ops, const Op& conv)
{
    const char* api = nullptr;
    cudnnBackendAttributeName_t xa{}, wa{}, ya{}, desc{};
    switch (conv.type)
    {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        api = "cudnnConvFprop";
        xa = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
        wa = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
        ya = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
        desc = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC;
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        api = "cudnnConvDgrad";
        xa = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
        wa = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
        ya = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
        desc = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
        break;
    default:
        api = "cudnnConvWgrad";
        xa = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
        wa = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
        ya = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
        desc = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
        break;
    }
    auto x = TensorAt(*conv.d, xa);
    auto w = TensorAt(*conv.d, wa);
    auto y = TensorAt(*conv.d, ya);
    const BackendDescriptor* cd = Ref(*conv.d, desc);
    if (!x || !w || !y || !cd || x->dims.size() < 3 || w->dims.size() != x->dims.size() ||
        y->dims.size() != x->dims.size())
    {
        return Unsupported(ops, "a convolution without X, W, Y tensors of one rank and its "
                                "convolution descriptor");
    }
    const auto pad = cd->Int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
    const auto stride = cd->Int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
    const auto dilation = cd->Int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS);
    const auto spatial = x->dims.size() - 2;
    if (pad.size() != spatial || stride.size() != spatial || dilation.size() != spatial)
    {
        return Unsupported(ops, "a convolution descriptor whose paddings, strides and "
                                "dilations do not match the tensors' spatial dims");
    }
    std::string epilogue;
    for (const Op& op : ops)
    {
        if (&op == &conv)
        {
            continue;
        }
        if (op.type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        {
            return Unsupported(ops, "a convolution fused with other than pointwise ops");
        }
        epilogue += (epilogue.empty() ? "" : "+") + PointwiseModeName(op.pwMode);
    }
    CudnnSignature sig;
    sig.api = api;
    auto add = [&](const char* k, std::string v) { sig.fields.emplace_back(k, std::move(v)); };
    add("x", JoinDims(x->dims));
    add("w", JoinDims(w->dims));
    add("y", JoinDims(y->dims));
    add("pad", JoinDims(pad));
    add("stride", JoinDims(stride));
    add("dilation", JoinDims(dilation));
    add("type", DataTypeName(x->type));
    add("compute", DataTypeName(cd->Enum<cudnnDataType_t>(CUDNN_ATTR_CONVOLUTION_COMP_TYPE)
                                    .value_or(CUDNN_DATA_FLOAT)));
    add("layout", ImageLayout(x->dims, x->strides));
    add("epilogue", epilogue.empty() ? "none" : epilogue);
    GraphSignature g;
    g.name = sig.Name();
    return g;
}

} // namespace

std::optional<cudnnBackendAttributeName_t> RunsAttribute(cudnnBackendDescriptorType_t type)
{
    switch (type)
    {
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
        return CUDNN_ATTR_ENGINE_OPERATION_GRAPH;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        return CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        return CUDNN_ATTR_ENGINECFG_ENGINE;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        return CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG;
    default:
        return std::nullopt;
    }
}

const char* DataTypeName(cudnnDataType_t type)
{
    switch (type)
    {
    case CUDNN_DATA_FLOAT:
        return "f32";
    case CUDNN_DATA_DOUBLE:
        return "f64";
    case CUDNN_DATA_HALF:
        return "f16";
    case CUDNN_DATA_BFLOAT16:
        return "bf16";
    case CUDNN_DATA_INT8:
        return "i8";
    case CUDNN_DATA_UINT8:
        return "u8";
    case CUDNN_DATA_INT32:
        return "i32";
    case CUDNN_DATA_INT64:
        return "i64";
    case CUDNN_DATA_BOOLEAN:
        return "bool";
    case CUDNN_DATA_FP8_E4M3:
        return "e4m3";
    case CUDNN_DATA_FP8_E5M2:
        return "e5m2";
    default:
        return "other";
    }
}

std::string ImageLayout(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides)
{
    const bool threeD = dims.size() == 5;
    if (dims.size() < 3 || strides.size() != dims.size())
    {
        return "?";
    }
    // channels innermost: the smallest stride, unless channels are 1 (then any layout is both)
    const bool channelsLast = dims[1] > 1 &&
                              strides[1] == *std::min_element(strides.begin(), strides.end()) &&
                              strides[1] < strides.back();
    if (channelsLast)
    {
        return threeD ? "ndhwc" : "nhwc";
    }
    return threeD ? "ncdhw" : "nchw";
}

std::string BatchNormSignature(const char* api, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides, cudnnDataType_t type, int mode,
                               int ops)
{
    std::string modeName = mode == CUDNN_BATCHNORM_PER_ACTIVATION ? "per_activation"
                           : mode == CUDNN_BATCHNORM_SPATIAL      ? "spatial"
                                                                  : "spatial_persistent";
    if (ops == CUDNN_BATCHNORM_OPS_BN_ACTIVATION)
    {
        modeName += "+act";
    }
    else if (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
    {
        modeName += "+add_act";
    }
    CudnnSignature sig;
    sig.api = api;
    sig.fields = {{"x", JoinDims(dims)},
                  {"type", DataTypeName(type)},
                  {"layout", ImageLayout(dims, strides)},
                  {"mode", modeName}};
    return sig.Name();
}

GraphSignature SignatureOfGraph(const BackendDescriptor& graph)
{
    std::vector<Op> ops;
    for (void* h : graph.Descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS))
    {
        const BackendDescriptor* d = graph.Resolve(h);
        if (!d)
        {
            GraphSignature g;
            g.unsupported = "a cuDNN graph with an operation the program never created";
            return g;
        }
        Op op{d, d->Type()};
        if (op.type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        {
            if (const BackendDescriptor* pw = Ref(*d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR))
            {
                op.pwMode = pw->Enum<cudnnPointwiseMode_t>(CUDNN_ATTR_POINTWISE_MODE)
                                .value_or(CUDNN_POINTWISE_IDENTITY);
                op.pwAxis = pw->Value<int64_t>(CUDNN_ATTR_POINTWISE_AXIS).value_or(-1);
            }
        }
        ops.push_back(op);
    }
    int convs = 0, matmuls = 0;
    const Op* conv = nullptr;
    const Op* sdpa = nullptr;
    bool softmax = false;
    for (const Op& op : ops)
    {
        switch (op.type)
        {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
            ++convs;
            conv = &op;
            break;
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
            ++matmuls;
            break;
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
            sdpa = &op;
            break;
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
            softmax = softmax || op.pwMode == CUDNN_POINTWISE_EXP;
            break;
        default:
            break;
        }
    }
    if (sdpa)
    {
        return UnifiedAttention(ops, *sdpa);
    }
    if (convs == 1 && matmuls == 0)
    {
        return Convolution(ops, *conv);
    }
    if (convs == 0 && softmax && (matmuls == 2 || matmuls >= 4))
    {
        return CompositeAttention(ops);
    }
    return Unsupported(ops, "");
}

} // namespace phantora::cudnn
