// A cuDNN execute's signature from the descriptors a program built
// (gpu_model/profile/cudnn_call_signature.h), on graphs built here the way cudnn-frontend
// builds them: attention forward and backward, a convolution with its epilogue, and a
// graph that is not simulated.
#include "gpu_model/profile/cudnn_call_signature.h"
#include "gpu_model/profile/cudnn_descriptor.h"

#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace phantora::cudnn;

namespace
{

/// Descriptors built as a program would: the handle is the descriptor's address.
class Builder
{
public:
    void* Make(cudnnBackendDescriptorType_t type)
    {
        auto d = std::make_shared<BackendDescriptor>(type);
        void* h = d.get();
        m_all[h] = std::move(d);
        return h;
    }
    BackendDescriptor& At(void* h) { return *m_all.at(h); }
    /// The program destroys \p h; what refers to it keeps it.
    void Destroy(void* h) { m_all.erase(h); }

    void* Tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                 cudnnDataType_t type, bool isVirtual, bool byValue = false)
    {
        void* h = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        BackendDescriptor& t = At(h);
        t.SetValues(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, std::vector<int64_t>{uid});
        t.SetValues(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims);
        t.SetValues(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides);
        t.Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
        t.Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &isVirtual);
        t.Set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byValue);
        return h;
    }
    /// A virtual (b, h, s, s') score-shaped tensor.
    void* Virtual(std::vector<int64_t> dims, cudnnDataType_t type = CUDNN_DATA_FLOAT)
    {
        std::vector<int64_t> strides(dims.size(), 1);
        for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
        {
            strides[i] = strides[i + 1] * dims[i + 1];
        }
        return Tensor(m_nextUid++, dims, strides, type, true);
    }
    void Refer(void* from, cudnnBackendAttributeName_t name, std::vector<void*> to)
    {
        ASSERT_TRUE(At(from).Set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 static_cast<int64_t>(to.size()), to.data(), Resolver()));
    }
    void* Pointwise(cudnnPointwiseMode_t mode, void* x, void* b, void* y, int64_t axis = -1)
    {
        void* pw = Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        At(pw).Set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
        if (axis >= 0)
        {
            At(pw).Set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
        }
        void* op = Make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        Refer(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, {pw});
        Refer(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, {x});
        if (b)
        {
            Refer(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, {b});
        }
        Refer(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, {y});
        Destroy(pw); // as cudnn-frontend does once the operation is built
        m_ops.push_back(op);
        return y;
    }
    void* Matmul(void* a, void* b, void* c)
    {
        void* op = Make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        Refer(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, {a});
        Refer(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, {b});
        Refer(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, {c});
        m_ops.push_back(op);
        return c;
    }
    void* Reduction(void* x, void* y)
    {
        void* op = Make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
        Refer(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, {x});
        Refer(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, {y});
        m_ops.push_back(op);
        return y;
    }
    void AddOp(void* op) { m_ops.push_back(op); }
    GraphSignature Signature()
    {
        void* g = Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        Refer(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, m_ops);
        return SignatureOfGraph(At(g));
    }

private:
    DescriptorResolver Resolver()
    {
        return [this](const void* h) -> std::shared_ptr<const BackendDescriptor>
        {
            auto it = m_all.find(h);
            return it == m_all.end() ? nullptr : it->second;
        };
    }
    std::map<const void*, std::shared_ptr<BackendDescriptor>> m_all;
    std::vector<void*> m_ops;
    int64_t m_nextUid{100};
};

constexpr int64_t B = 2, H = 4, S = 128, D = 64;

/// (b, h, s, d) views of a (b, s, h, d) tensor, as PyTorch passes q, k and v.
void* Bshd(Builder& g, int64_t uid, int64_t d, bool isVirtual = false)
{
    return g.Tensor(uid, {B, H, S, d}, {S * H * d, d, H * d, 1}, CUDNN_DATA_BFLOAT16, isVirtual);
}

void* KTransposed(Builder& g, int64_t uid, int64_t d)
{
    return g.Tensor(uid, {B, H, d, S}, {S * H * d, d, 1, H * d}, CUDNN_DATA_BFLOAT16, false);
}

/// Scale, the causal mask (row and column indices compared), then softmax with its
/// log-sum-exp kept: the forward graph's middle, from the scores to the probabilities.
void* MaskedSoftmax(Builder& g, void* scores, bool causal, bool keepStats)
{
    void* scale = g.Tensor(1, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
    void* s = g.Pointwise(CUDNN_POINTWISE_MUL, scores, scale, g.Virtual({B, H, S, S}));
    if (causal)
    {
        void* row = g.Pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr,
                                g.Virtual({B, H, S, S}, CUDNN_DATA_INT32), 2);
        void* col = g.Pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr,
                                g.Virtual({B, H, S, S}, CUDNN_DATA_INT32), 3);
        void* keep = g.Pointwise(CUDNN_POINTWISE_CMP_GE, row, col,
                                 g.Virtual({B, H, S, S}, CUDNN_DATA_BOOLEAN));
        s = g.Pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, keep, g.Virtual({B, H, S, S}));
    }
    void* max = g.Reduction(s, g.Virtual({B, H, S, 1}));
    void* e = g.Pointwise(CUDNN_POINTWISE_EXP,
                          g.Pointwise(CUDNN_POINTWISE_SUB, s, max, g.Virtual({B, H, S, S})),
                          nullptr, g.Virtual({B, H, S, S}));
    void* sum = g.Reduction(e, g.Virtual({B, H, S, 1}));
    if (keepStats)
    {
        void* lse = g.Pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, g.Virtual({B, H, S, 1}));
        g.Pointwise(CUDNN_POINTWISE_ADD, max, lse,
                    g.Tensor(9, {B, H, S, 1}, {H * S, S, 1, 1}, CUDNN_DATA_FLOAT, false));
    }
    return g.Pointwise(CUDNN_POINTWISE_DIV, e, sum, g.Virtual({B, H, S, S}));
}

std::string Forward(bool causal, int64_t dv)
{
    Builder g;
    void* scores = g.Matmul(Bshd(g, 2, D), KTransposed(g, 3, D), g.Virtual({B, H, S, S}));
    void* p = MaskedSoftmax(g, scores, causal, true);
    g.Matmul(p, Bshd(g, 4, dv), Bshd(g, 5, dv));
    const GraphSignature sig = g.Signature();
    EXPECT_EQ(sig.workspaceBytes, 0);
    return sig.name;
}

} // namespace

TEST(CudnnGraphSignature, CompositeAttentionForwardIsNamedByItsShapeAndMask)
{
    EXPECT_EQ(Forward(true, D),
              "cudnnSdpaFprop(b=2,h=4,h_kv=4,s_q=128,s_kv=128,d_qk=64,d_v=64,type=bf16,"
              "layout=bshd,causal=1,bias=0,padding=0,dropout=0,scale=1,stats=1)");
    EXPECT_EQ(Forward(false, 32),
              "cudnnSdpaFprop(b=2,h=4,h_kv=4,s_q=128,s_kv=128,d_qk=64,d_v=32,type=bf16,"
              "layout=bshd,causal=0,bias=0,padding=0,dropout=0,scale=1,stats=1)");
}

TEST(CudnnGraphSignature, CompositeAttentionBackwardTakesDvFromTheGradientOfTheOutput)
{
    const int64_t dv = 32;
    Builder g;
    void* scores = g.Matmul(Bshd(g, 2, D), KTransposed(g, 3, D), g.Virtual({B, H, S, S}));
    void* p = MaskedSoftmax(g, scores, true, false);
    // dP = dO V^T, both read from memory; then dV, dQ and dK from virtual operands
    void* vt = g.Tensor(4, {B, H, dv, S}, {S * H * dv, dv, 1, H * dv}, CUDNN_DATA_BFLOAT16, false);
    void* dp = g.Matmul(Bshd(g, 6, dv), vt, g.Virtual({B, H, S, S}));
    g.Matmul(g.Virtual({B, H, S, S}), Bshd(g, 7, dv, true), Bshd(g, 8, dv));
    g.Matmul(g.Pointwise(CUDNN_POINTWISE_MUL, p, dp, g.Virtual({B, H, S, S})), Bshd(g, 10, D, true),
             Bshd(g, 11, D));
    g.Matmul(g.Virtual({B, H, S, S}), Bshd(g, 12, D, true), Bshd(g, 13, D));
    const GraphSignature sig = g.Signature();
    EXPECT_EQ(sig.name, "cudnnSdpaBprop(b=2,h=4,h_kv=4,s_q=128,s_kv=128,d_qk=64,d_v=32,type=bf16,"
                        "layout=bshd,causal=1,bias=0,padding=0,dropout=0,scale=1)");
}

TEST(CudnnGraphSignature, AConvolutionIsNamedWithItsLayoutAndEpilogue)
{
    Builder g;
    // NHWC: channels innermost
    void* x =
        g.Tensor(1, {8, 64, 56, 56}, {56 * 56 * 64, 1, 56 * 64, 64}, CUDNN_DATA_BFLOAT16, false);
    void* w = g.Tensor(2, {128, 64, 3, 3}, {9 * 64, 1, 3 * 64, 64}, CUDNN_DATA_BFLOAT16, false);
    void* y =
        g.Tensor(3, {8, 128, 28, 28}, {28 * 28 * 128, 1, 28 * 128, 128}, CUDNN_DATA_BFLOAT16, true);
    void* conv = g.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    g.At(conv).Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    g.At(conv).SetValues(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
                         std::vector<int64_t>{1, 1});
    g.At(conv).SetValues(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
                         std::vector<int64_t>{2, 2});
    g.At(conv).SetValues(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64,
                         std::vector<int64_t>{1, 1});
    void* op = g.Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    g.Refer(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, {x});
    g.Refer(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, {w});
    g.Refer(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, {y});
    g.Refer(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, {conv});
    g.Destroy(conv); // PyTorch's frontend drops it once the operation is built
    g.AddOp(op);
    g.Pointwise(CUDNN_POINTWISE_RELU_FWD, y, nullptr,
                g.Tensor(4, {8, 128, 28, 28}, {28 * 28 * 128, 1, 28 * 128, 128},
                         CUDNN_DATA_BFLOAT16, false));
    const GraphSignature sig = g.Signature();
    EXPECT_EQ(sig.name, "cudnnConvFprop(x=8x64x56x56,w=128x64x3x3,y=8x128x28x28,pad=1x1,"
                        "stride=2x2,dilation=1x1,type=bf16,compute=f32,layout=nhwc,epilogue=relu)");
    EXPECT_EQ(sig.workspaceBytes, 0);
}

TEST(CudnnGraphSignature, AGraphItDoesNotKnowNamesItsOperations)
{
    Builder g;
    g.Matmul(g.Tensor(1, {1, 64, 32}, {2048, 32, 1}, CUDNN_DATA_HALF, false),
             g.Tensor(2, {1, 32, 16}, {512, 16, 1}, CUDNN_DATA_HALF, false),
             g.Virtual({1, 64, 16}));
    g.Pointwise(CUDNN_POINTWISE_GELU_FWD, g.Virtual({1, 64, 16}), nullptr,
                g.Tensor(3, {1, 64, 16}, {1024, 16, 1}, CUDNN_DATA_HALF, false));
    const GraphSignature sig = g.Signature();
    EXPECT_TRUE(sig.name.empty());
    EXPECT_EQ(sig.unsupported, "a cuDNN graph of MATMUL, POINTWISE(gelu)");
}

TEST(CudnnGraphSignature, RunsAttributesLeadFromAPlanToItsGraph)
{
    EXPECT_EQ(RunsAttribute(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR),
              CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
    EXPECT_EQ(RunsAttribute(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), CUDNN_ATTR_ENGINECFG_ENGINE);
    EXPECT_EQ(RunsAttribute(CUDNN_BACKEND_ENGINE_DESCRIPTOR), CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
    EXPECT_EQ(RunsAttribute(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR),
              CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
    EXPECT_FALSE(RunsAttribute(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
}

TEST(CudnnGraphSignature, LegacyBatchNormIsNamedByItsInput)
{
    EXPECT_EQ(ImageLayout({8, 64, 7, 7}, {3136, 49, 7, 1}), "nchw");
    EXPECT_EQ(ImageLayout({8, 64, 7, 7}, {3136, 1, 448, 64}), "nhwc");
    EXPECT_EQ(ImageLayout({8, 64, 2, 7, 7}, {6272, 1, 3136, 448, 64}), "ndhwc");
    EXPECT_EQ(BatchNormSignature("cudnnBatchNormFwdTraining", {8, 64, 7, 7}, {3136, 1, 448, 64},
                                 CUDNN_DATA_HALF, 2, 0),
              "cudnnBatchNormFwdTraining(x=8x64x7x7,type=f16,layout=nhwc,mode=spatial_persistent)");
    EXPECT_EQ(BatchNormSignature("cudnnBatchNormBwd", {8, 64, 7, 7}, {3136, 49, 7, 1},
                                 CUDNN_DATA_FLOAT, 1, 1),
              "cudnnBatchNormBwd(x=8x64x7x7,type=f32,layout=nchw,mode=spatial+act)");
}

TEST(CudnnDescriptor, GivesBackWhatWasSetWithItsCount)
{
    BackendDescriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t dims[] = {2, 3, 4};
    ASSERT_TRUE(d.Set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 3, dims));
    const AttributeValue* v = d.Find(CUDNN_ATTR_TENSOR_DIMENSIONS);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->count, 3);
    EXPECT_EQ(v->type, CUDNN_TYPE_INT64);
    EXPECT_EQ(d.Int64s(CUDNN_ATTR_TENSOR_DIMENSIONS), (std::vector<int64_t>{2, 3, 4}));
    // read as another element size: nothing
    EXPECT_TRUE(d.Values<int32_t>(CUDNN_ATTR_TENSOR_DIMENSIONS).empty());
    const bool yes = true;
    ASSERT_TRUE(d.Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes));
    EXPECT_EQ(d.Value<bool>(CUDNN_ATTR_TENSOR_IS_VIRTUAL), true);
    EXPECT_FALSE(d.Set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, -1, dims));
    // a descriptor handle nothing stands behind is refused
    void* nowhere = &d;
    EXPECT_FALSE(d.Set(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                       &nowhere, [](const void*) { return nullptr; }));
}
