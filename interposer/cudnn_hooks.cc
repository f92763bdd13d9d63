// cuDNN: only its version queries, which frameworks make while deciding what to
// use.  Every other cuDNN export fails loudly naming itself (generate_stubs.sh):
// the real library would reach for the driver's private tables (cuGetExportTable),
// and its graph API (cuDNN attention, convolutions) is not simulated yet.
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>
#include <cudnn_version.h>

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

    const char* cudnnGetErrorString(cudnnStatus_t status)
    {
        switch (status)
        {
        case CUDNN_STATUS_SUCCESS:
            return "CUDNN_STATUS_SUCCESS";
        case CUDNN_STATUS_NOT_SUPPORTED:
            return "CUDNN_STATUS_NOT_SUPPORTED";
        case CUDNN_STATUS_BAD_PARAM:
            return "CUDNN_STATUS_BAD_PARAM";
        default:
            return "CUDNN_STATUS_INTERNAL_ERROR";
        }
    }

} // extern "C"
