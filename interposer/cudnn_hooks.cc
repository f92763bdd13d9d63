// cuDNN: handles, their streams, version and property queries, error strings.  The
// graph API is in cudnn_backend_hooks.cc, the legacy batch-norm calls in
// cudnn_legacy_hooks.cc; every other cuDNN export fails loudly naming itself
// (generate_stubs.sh): the real library would reach for the driver's private tables
// (cuGetExportTable), and its other calls are not simulated.
#include "cudnn_state.h"
#include "hook_scope.h"

#include <algorithm>
#include <cstring>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>
#include <cudnn_version.h>
#include <library_types.h>

using namespace phantora::interposer;

extern "C"
{

    size_t cudnnGetVersion()
    {
        return CUDNN_VERSION;
    }

    size_t cudnnGetMaxDeviceVersion()
    {
        return CUDNN_MAX_DEVICE_VERSION;
    }

    size_t cudnnGetCudartVersion()
    {
        return CUDART_VERSION;
    }

    cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int* value)
    {
        if (!value)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        switch (type)
        {
        case MAJOR_VERSION:
            *value = CUDNN_MAJOR;
            return CUDNN_STATUS_SUCCESS;
        case MINOR_VERSION:
            *value = CUDNN_MINOR;
            return CUDNN_STATUS_SUCCESS;
        case PATCH_LEVEL:
            *value = CUDNN_PATCHLEVEL;
            return CUDNN_STATUS_SUCCESS;
        }
        return CUDNN_STATUS_BAD_PARAM;
    }

    // The sub-libraries are all "loaded": their entry points are the interposer's.
    cudnnStatus_t cudnnGraphVersionCheck()
    {
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnOpsVersionCheck()
    {
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnCnnVersionCheck()
    {
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnAdvVersionCheck()
    {
        return CUDNN_STATUS_SUCCESS;
    }

    const char* cudnnGetErrorString(cudnnStatus_t status)
    {
        switch (status)
        {
        case CUDNN_STATUS_SUCCESS:
            return "CUDNN_STATUS_SUCCESS";
        case CUDNN_STATUS_NOT_INITIALIZED:
            return "CUDNN_STATUS_NOT_INITIALIZED";
        case CUDNN_STATUS_BAD_PARAM:
            return "CUDNN_STATUS_BAD_PARAM";
        case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
            return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
        case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED:
            return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
        case CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE:
            return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
        case CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE:
            return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
        case CUDNN_STATUS_NOT_SUPPORTED:
            return "CUDNN_STATUS_NOT_SUPPORTED";
        case CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN:
            return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
        default:
            return "CUDNN_STATUS_INTERNAL_ERROR";
        }
    }

    void cudnnGetLastErrorString(char* message, size_t maxSize)
    {
        if (!message || maxSize == 0)
        {
            return;
        }
        const std::string& last = cudnn_state::LastError();
        const size_t n = std::min(last.size(), maxSize - 1);
        std::memcpy(message, last.data(), n);
        message[n] = '\0';
    }

    cudnnStatus_t cudnnCreate(cudnnHandle_t* handle)
    {
        HookScope scope;
        if (!handle)
        {
            return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
        }
        *handle = cudnn_state::CreateHandle();
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
    {
        HookScope scope;
        return cudnn_state::DestroyHandle(handle) ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
    }

    cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
    {
        HookScope scope;
        cudnnContext* ctx = cudnn_state::FindHandle(handle);
        if (!ctx)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        ctx->stream = stream;
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream)
    {
        HookScope scope;
        cudnnContext* ctx = cudnn_state::FindHandle(handle);
        if (!ctx || !stream)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        *stream = ctx->stream;
        return CUDNN_STATUS_SUCCESS;
    }

} // extern "C"
