// cuDNN's legacy (descriptor-and-call) API, as far as PyTorch uses it for
// nn.BatchNorm*d: tensor descriptors and the batch-norm calls.  Each compute call is one
// op on the handle's stream, named by its signature (gpu_model/profile/cudnn_call_signature.h)
// and timed by the bridge (measured, else by the bytes it moves over HBM).  Workspaces
// and reserve spaces are modelled as empty: the calls take none beyond their
// tensors in this model, and the recorder prints the real sizes for comparison.
#include "cuda_state.h"
#include "cudnn_state.h"
#include "hook_scope.h"

#include <algorithm>
#include <cudnn_ops.h>
#include <fmt/format.h>
#include <string>

// The batch-norm calls are deprecated in cuDNN 9; PyTorch still makes them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

using namespace phantora;
using namespace phantora::interposer;

namespace
{

cudnnStatus_t BatchNorm(const char* api, cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                        cudnnBatchNormOps_t ops, cudnnTensorDescriptor_t x)
{
    HookScope scope;
    const cudnnContext* ctx = cudnn_state::FindHandle(handle);
    const cudnnTensorStruct* t = cudnn_state::FindTensor(x);
    if (!ctx || !t || t->dims.size() < 2)
    {
        return CUDNN_STATUS_BAD_PARAM;
    }
    wire::KernelLaunch op;
    op.stream = StreamId(ctx->stream);
    op.name = cudnn::BatchNormSignature(api, t->dims, t->strides, t->type, mode, ops);
    scope.Client().Post(std::move(op));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t NoSpace(size_t* sizeInBytes)
{
    if (!sizeInBytes)
    {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C"
{

    cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* desc)
    {
        HookScope scope;
        if (!desc)
        {
            return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
        }
        *desc = cudnn_state::CreateTensor();
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t desc)
    {
        HookScope scope;
        // cuDNN accepts a null descriptor here
        return !desc || cudnn_state::DestroyTensor(desc) ? CUDNN_STATUS_SUCCESS
                                                         : CUDNN_STATUS_BAD_PARAM;
    }

    cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t dataType,
                                             int nbDims, const int dimA[], const int strideA[])
    {
        HookScope scope;
        cudnnTensorStruct* t = cudnn_state::FindTensor(desc);
        if (!t || nbDims <= 0 || !dimA || !strideA)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        t->type = dataType;
        t->dims.assign(dimA, dimA + nbDims);
        t->strides.assign(strideA, strideA + nbDims);
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t desc,
                                             int nbDimsRequested, cudnnDataType_t* dataType,
                                             int* nbDims, int dimA[], int strideA[])
    {
        HookScope scope;
        const cudnnTensorStruct* t = cudnn_state::FindTensor(desc);
        if (!t || nbDimsRequested < 0)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (dataType)
        {
            *dataType = t->type;
        }
        if (nbDims)
        {
            *nbDims = static_cast<int>(t->dims.size());
        }
        const auto n =
            std::min<std::size_t>(static_cast<std::size_t>(nbDimsRequested), t->dims.size());
        for (std::size_t i = 0; i < n; ++i)
        {
            if (dimA)
            {
                dimA[i] = static_cast<int>(t->dims[i]);
            }
            if (strideA)
            {
                strideA[i] = static_cast<int>(t->strides[i]);
            }
        }
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        cudnnHandle_t, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnTensorDescriptor_t,
        const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
        const cudnnActivationDescriptor_t, size_t* sizeInBytes)
    {
        HookScope scope;
        return NoSpace(sizeInBytes);
    }

    cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
        cudnnHandle_t, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnTensorDescriptor_t,
        const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
        const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
        const cudnnActivationDescriptor_t, size_t* sizeInBytes)
    {
        HookScope scope;
        return NoSpace(sizeInBytes);
    }

    cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
        cudnnHandle_t, cudnnBatchNormMode_t, cudnnBatchNormOps_t, const cudnnActivationDescriptor_t,
        const cudnnTensorDescriptor_t, size_t* sizeInBytes)
    {
        HookScope scope;
        return NoSpace(sizeInBytes);
    }

    cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void*,
        const void*, const cudnnTensorDescriptor_t xDesc, const void*,
        const cudnnTensorDescriptor_t, const void*, const cudnnTensorDescriptor_t, void*,
        const cudnnTensorDescriptor_t, const void*, const void*, double, void*, void*, double,
        void*, void*, cudnnActivationDescriptor_t, void*, size_t, void*, size_t)
    {
        return BatchNorm("cudnnBatchNormFwdTraining", handle, mode, bnOps, xDesc);
    }

    cudnnStatus_t cudnnBatchNormalizationBackwardEx(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void*,
        const void*, const void*, const void*, const cudnnTensorDescriptor_t xDesc, const void*,
        const cudnnTensorDescriptor_t, const void*, const cudnnTensorDescriptor_t, const void*,
        const cudnnTensorDescriptor_t, void*, const cudnnTensorDescriptor_t, void*,
        const cudnnTensorDescriptor_t, const void*, const void*, void*, void*, double, const void*,
        const void*, cudnnActivationDescriptor_t, void*, size_t, void*, size_t)
    {
        return BatchNorm("cudnnBatchNormBwd", handle, mode, bnOps, xDesc);
    }

    cudnnStatus_t cudnnBatchNormalizationForwardInference(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void*, const void*,
        const cudnnTensorDescriptor_t xDesc, const void*, const cudnnTensorDescriptor_t, void*,
        const cudnnTensorDescriptor_t, const void*, const void*, const void*, const void*, double)
    {
        return BatchNorm("cudnnBatchNormFwdInference", handle, mode, CUDNN_BATCHNORM_OPS_BN, xDesc);
    }

} // extern "C"
