// What the program's cuDNN handles and descriptors hold, under the simulator: the handle's
// stream, every backend descriptor's attributes (gpu_model/profile/cudnn_descriptor.h) with
// what the simulator worked out for it, and the legacy tensor descriptors.  The hook
// files (cudnn_hooks.cc, cudnn_backend_hooks.cc, cudnn_legacy_hooks.cc) translate the
// API onto these; each table is reached through its accessor functions only.
#pragma once

#include "gpu_model/profile/cudnn_call_signature.h"
#include "gpu_model/profile/cudnn_descriptor.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>
#include <cudnn_ops.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// cuDNN's opaque handle type (cudnn_graph.h declares it, the library defines it).
struct cudnnContext
{
    cudaStream_t stream{nullptr};
};

/// The legacy API's tensor descriptor (cudnn_ops.h declares it).
struct cudnnTensorStruct
{
    cudnnDataType_t type{CUDNN_DATA_FLOAT};
    std::vector<int64_t> dims, strides;
};

namespace phantora::interposer::cudnn_state
{

/// A backend descriptor the program holds: the handle it gets is this object's address,
/// and the object lives on while another descriptor's attribute refers to it.
struct BackendObject
{
    explicit BackendObject(cudnnBackendDescriptorType_t type) : descriptor(type) {}

    cudnn::BackendDescriptor descriptor;
    /// Operation graphs, and the engines, engine configurations, heuristics and plans
    /// made for one: what running it does (copied at Finalize, so the graph may go first).
    std::optional<cudnn::GraphSignature> signature;
    const void* graph{nullptr}; ///< the graph the signature is of (its handle)
    int64_t engineIndex{0};     ///< engines and engine configurations
};

/// The calling thread's last error message (cudnnGetLastErrorString), set where a call
/// fails for a reason its status alone would not tell.
void SetLastError(std::string message);
const std::string& LastError();

cudnnContext* CreateHandle();
cudnnContext* FindHandle(cudnnHandle_t handle);
bool DestroyHandle(cudnnHandle_t handle);

BackendObject* CreateBackend(cudnnBackendDescriptorType_t type);
/// The program's live descriptor \p handle; nullptr once it destroyed it.
BackendObject* FindBackend(const void* handle);
bool DestroyBackend(const void* handle);
/// For descriptor-valued attributes: the descriptor behind \p handle, kept alive by the
/// attribute (cudnn_descriptor.h).
std::shared_ptr<const cudnn::BackendDescriptor> ShareBackend(const void* handle);
/// What \p referrer's attribute \p name refers to (its first element), alive or not.
const BackendObject* Referenced(const BackendObject& referrer, cudnnBackendAttributeName_t name);

cudnnTensorStruct* CreateTensor();
cudnnTensorStruct* FindTensor(const void* handle);
bool DestroyTensor(const void* handle);

} // namespace phantora::interposer::cudnn_state
