// The cuDNN entry points the recorder stands in front of, so that each execute is stored
// under the signature the simulator gives it: every backend descriptor the program builds
// is shadowed (cudnn_descriptor.h: what it set, as it set it), an operation graph is named
// at its Finalize by the same code the interposer runs (cudnn_call_signature.h), the
// engines, configurations and plans made for it carry that name along the same chain
// (RunsAttribute), and cudnnBackendExecute and the batch-norm calls run inside a
// LibraryCallScope.  Every call is forwarded to the real libcudnn unchanged.
//
// Once per signature, stderr gets the engine the program ran and the workspace it was
// given: the simulator models workspaces (cudnn_call_signature.h), this is what to
// compare them with.
#include "gpu_model/profile/cudnn_call_signature.h"
#include "gpu_model/profile/cudnn_descriptor.h"
#include "recorder_call_scope.h"
#include "recorder_real_symbol.h"

#include <cstdio>
#include <cudnn_graph.h>
#include <cudnn_ops.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

// The batch-norm calls are deprecated in cuDNN 9; PyTorch still makes them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace
{

using phantora::cudnn::BackendDescriptor;
using phantora::recorder::LibraryCallScope;

template <class F> F Real(const char* name)
{
    return phantora::recorder::RealSymbol<F>(name, {"libcudnn.so.9", "libcudnn.so"});
}

struct Shadow
{
    explicit Shadow(cudnnBackendDescriptorType_t type) : descriptor(type) {}
    BackendDescriptor descriptor;
    std::optional<std::string> signature; ///< graphs, and what runs one
    /// The shadows this one's descriptor-valued attributes name, as they were when set:
    /// the real library may hand a destroyed descriptor's address out again.
    std::map<const void*, std::shared_ptr<Shadow>> referenced;
};

struct LegacyTensor
{
    cudnnDataType_t type{CUDNN_DATA_FLOAT};
    std::vector<int64_t> dims, strides;
};

struct Shadows
{
    std::mutex mutex;
    std::map<const void*, std::shared_ptr<Shadow>> backend;
    std::map<const void*, LegacyTensor> tensors;
    std::set<std::string> reported;
};

Shadows& Sh()
{
    static auto* s = new Shadows; // never destroyed: cuDNN calls may come during exit
    return *s;
}

Shadow* Find(Shadows& s, const void* handle)
{
    auto it = s.backend.find(handle);
    return it == s.backend.end() ? nullptr : it->second.get();
}

/// Prints, once per signature, what the real library chose for it.
void ReportOnce(const std::string& signature, const std::string& what)
{
    {
        Shadows& s = Sh();
        std::lock_guard lock(s.mutex);
        if (!s.reported.insert(signature).second)
        {
            return;
        }
    }
    std::fprintf(stderr, "phantora recorder: cuDNN %s: %s\n", signature.c_str(), what.c_str());
}

/// The engine a finalised plan runs and its workspace, asked of the real library.
std::string PlanFacts(cudnnBackendDescriptor_t plan)
{
    static auto create =
        Real<decltype(&cudnnBackendCreateDescriptor)>("cudnnBackendCreateDescriptor");
    static auto destroy =
        Real<decltype(&cudnnBackendDestroyDescriptor)>("cudnnBackendDestroyDescriptor");
    static auto get = Real<decltype(&cudnnBackendGetAttribute)>("cudnnBackendGetAttribute");
    int64_t n = 0, workspace = -1, engineIndex = -1;
    get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &workspace);
    cudnnBackendDescriptor_t cfg = nullptr, engine = nullptr;
    if (create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg) == CUDNN_STATUS_SUCCESS &&
        create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) == CUDNN_STATUS_SUCCESS &&
        get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
            &cfg) == CUDNN_STATUS_SUCCESS &&
        get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) ==
            CUDNN_STATUS_SUCCESS)
    {
        get(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &engineIndex);
    }
    if (engine)
    {
        destroy(engine);
    }
    if (cfg)
    {
        destroy(cfg);
    }
    return "engine " + std::to_string(engineIndex) + ", workspace " + std::to_string(workspace) +
           " bytes";
}

/// After a successful Finalize: a graph gets its signature, what runs one takes it over.
void Finalized(cudnnBackendDescriptor_t handle)
{
    Shadows& s = Sh();
    std::lock_guard lock(s.mutex);
    Shadow* sh = Find(s, handle);
    if (!sh)
    {
        return;
    }
    const cudnnBackendDescriptorType_t type = sh->descriptor.Type();
    if (type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    {
        const auto sig = phantora::cudnn::SignatureOfGraph(sh->descriptor);
        if (sig.name.empty())
        {
            std::fprintf(stderr,
                         "phantora recorder: %s is not simulated: its executes are recorded as "
                         "their kernels\n",
                         sig.unsupported.c_str());
            return;
        }
        sh->signature = sig.name;
        return;
    }
    if (const auto runs = phantora::cudnn::RunsAttribute(type))
    {
        const auto refs = sh->descriptor.Descriptors(*runs);
        auto from = refs.empty() ? sh->referenced.end() : sh->referenced.find(refs.front());
        if (from != sh->referenced.end())
        {
            sh->signature = from->second->signature;
        }
    }
}

/// After a successful GetAttribute: the descriptors the library filled in (heuristics'
/// configurations, a configuration's engine, a plan's configuration) run what the
/// descriptor asked of runs.
void Filled(cudnnBackendDescriptor_t handle, cudnnBackendAttributeName_t name, int64_t count,
            void* elements)
{
    if (name != CUDNN_ATTR_ENGINEHEUR_RESULTS && name != CUDNN_ATTR_ENGINECFG_ENGINE &&
        name != CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)
    {
        return;
    }
    Shadows& s = Sh();
    std::lock_guard lock(s.mutex);
    Shadow* sh = Find(s, handle);
    if (!sh || !elements)
    {
        return;
    }
    auto** out = static_cast<void**>(elements);
    for (int64_t i = 0; i < count; ++i)
    {
        if (Shadow* dst = Find(s, out[i]))
        {
            dst->signature = sh->signature;
        }
    }
}

} // namespace

extern "C"
{

    cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                               cudnnBackendDescriptor_t* descriptor)
    {
        static auto real =
            Real<decltype(&cudnnBackendCreateDescriptor)>("cudnnBackendCreateDescriptor");
        const cudnnStatus_t rc = real(type, descriptor);
        if (rc == CUDNN_STATUS_SUCCESS && descriptor)
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            s.backend.insert_or_assign(*descriptor, std::make_shared<Shadow>(type));
        }
        return rc;
    }

    cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
    {
        static auto real =
            Real<decltype(&cudnnBackendDestroyDescriptor)>("cudnnBackendDestroyDescriptor");
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            s.backend.erase(descriptor);
        }
        return real(descriptor);
    }

    cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                           cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type, int64_t count,
                                           const void* elements)
    {
        static auto real = Real<decltype(&cudnnBackendSetAttribute)>("cudnnBackendSetAttribute");
        const cudnnStatus_t rc = real(descriptor, name, type, count, elements);
        if (rc == CUDNN_STATUS_SUCCESS)
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            Shadow* sh = Find(s, descriptor);
            if (sh && type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
            {
                auto resolve = [&](const void* h) -> std::shared_ptr<const BackendDescriptor>
                {
                    auto it = s.backend.find(h);
                    if (it == s.backend.end())
                    {
                        return nullptr;
                    }
                    sh->referenced.insert_or_assign(h, it->second);
                    return std::shared_ptr<const BackendDescriptor>(it->second,
                                                                    &it->second->descriptor);
                };
                sh->descriptor.Set(name, type, count, elements, resolve);
            }
            else if (sh)
            {
                sh->descriptor.Set(name, type, count, elements);
            }
        }
        return rc;
    }

    cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                           cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type,
                                           int64_t requestedElementCount, int64_t* elementCount,
                                           void* arrayOfElements)
    {
        static auto real = Real<decltype(&cudnnBackendGetAttribute)>("cudnnBackendGetAttribute");
        const cudnnStatus_t rc =
            real(descriptor, name, type, requestedElementCount, elementCount, arrayOfElements);
        if (rc == CUDNN_STATUS_SUCCESS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR && elementCount)
        {
            Filled(descriptor, name, std::min(requestedElementCount, *elementCount),
                   arrayOfElements);
        }
        return rc;
    }

    cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
    {
        static auto real = Real<decltype(&cudnnBackendFinalize)>("cudnnBackendFinalize");
        const cudnnStatus_t rc = real(descriptor);
        if (rc == CUDNN_STATUS_SUCCESS)
        {
            Finalized(descriptor);
        }
        return rc;
    }

    cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                      cudnnBackendDescriptor_t variantPack)
    {
        static auto real = Real<decltype(&cudnnBackendExecute)>("cudnnBackendExecute");
        std::optional<std::string> name;
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            if (Shadow* sh = Find(s, plan))
            {
                name = sh->signature;
            }
        }
        if (!name)
        {
            return real(handle, plan, variantPack);
        }
        ReportOnce(*name, PlanFacts(plan));
        LibraryCallScope scope(*name, __builtin_return_address(0));
        return real(handle, plan, variantPack);
    }

    cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t desc)
    {
        static auto real =
            Real<decltype(&cudnnDestroyTensorDescriptor)>("cudnnDestroyTensorDescriptor");
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            s.tensors.erase(desc);
        }
        return real(desc);
    }

    cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t dataType,
                                             int nbDims, const int dimA[], const int strideA[])
    {
        static auto real =
            Real<decltype(&cudnnSetTensorNdDescriptor)>("cudnnSetTensorNdDescriptor");
        const cudnnStatus_t rc = real(desc, dataType, nbDims, dimA, strideA);
        if (rc == CUDNN_STATUS_SUCCESS && nbDims > 0)
        {
            Shadows& s = Sh();
            std::lock_guard lock(s.mutex);
            LegacyTensor& t = s.tensors[desc];
            t.type = dataType;
            t.dims.assign(dimA, dimA + nbDims);
            t.strides.assign(strideA, strideA + nbDims);
        }
        return rc;
    }

} // extern "C"

namespace
{

std::optional<std::string> BatchNormName(const char* api, cudnnBatchNormMode_t mode,
                                         cudnnBatchNormOps_t ops, cudnnTensorDescriptor_t x)
{
    Shadows& s = Sh();
    std::lock_guard lock(s.mutex);
    auto it = s.tensors.find(x);
    if (it == s.tensors.end() || it->second.dims.size() < 2)
    {
        return std::nullopt;
    }
    return phantora::cudnn::BatchNormSignature(api, it->second.dims, it->second.strides,
                                               it->second.type, mode, ops);
}

void ReportSpaces(const std::string& name, size_t workspace, size_t reserve)
{
    ReportOnce(name, "workspace " + std::to_string(workspace) + " bytes, reserve space " +
                         std::to_string(reserve) + " bytes");
}

} // namespace

extern "C"
{

    cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
        const void* alpha, const void* beta, const cudnnTensorDescriptor_t xDesc, const void* xData,
        const cudnnTensorDescriptor_t zDesc, const void* zData, const cudnnTensorDescriptor_t yDesc,
        void* yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
        const void* bnBias, double exponentialAverageFactor, void* resultRunningMean,
        void* resultRunningVariance, double epsilon, void* resultSaveMean,
        void* resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc, void* workspace,
        size_t workSpaceSizeInBytes, void* reserveSpace, size_t reserveSpaceSizeInBytes)
    {
        static auto real = Real<decltype(&cudnnBatchNormalizationForwardTrainingEx)>(
            "cudnnBatchNormalizationForwardTrainingEx");
        auto call = [&]
        {
            return real(handle, mode, bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc, yData,
                        bnScaleBiasMeanVarDesc, bnScale, bnBias, exponentialAverageFactor,
                        resultRunningMean, resultRunningVariance, epsilon, resultSaveMean,
                        resultSaveInvVariance, activationDesc, workspace, workSpaceSizeInBytes,
                        reserveSpace, reserveSpaceSizeInBytes);
        };
        const auto name = BatchNormName("cudnnBatchNormFwdTraining", mode, bnOps, xDesc);
        if (!name)
        {
            return call();
        }
        ReportSpaces(*name, workSpaceSizeInBytes, reserveSpaceSizeInBytes);
        LibraryCallScope scope(*name, __builtin_return_address(0));
        return call();
    }

    cudnnStatus_t cudnnBatchNormalizationBackwardEx(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
        const void* alphaDataDiff, const void* betaDataDiff, const void* alphaParamDiff,
        const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* xData,
        const cudnnTensorDescriptor_t yDesc, const void* yData,
        const cudnnTensorDescriptor_t dyDesc, const void* dyData,
        const cudnnTensorDescriptor_t dzDesc, void* dzData, const cudnnTensorDescriptor_t dxDesc,
        void* dxData, const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScaleData,
        const void* bnBiasData, void* dBnScaleData, void* dBnBiasData, double epsilon,
        const void* savedMean, const void* savedInvVariance,
        cudnnActivationDescriptor_t activationDesc, void* workSpace, size_t workSpaceSizeInBytes,
        void* reserveSpace, size_t reserveSpaceSizeInBytes)
    {
        static auto real =
            Real<decltype(&cudnnBatchNormalizationBackwardEx)>("cudnnBatchNormalizationBackwardEx");
        auto call = [&]
        {
            return real(handle, mode, bnOps, alphaDataDiff, betaDataDiff, alphaParamDiff,
                        betaParamDiff, xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData,
                        dxDesc, dxData, dBnScaleBiasDesc, bnScaleData, bnBiasData, dBnScaleData,
                        dBnBiasData, epsilon, savedMean, savedInvVariance, activationDesc,
                        workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
        };
        const auto name = BatchNormName("cudnnBatchNormBwd", mode, bnOps, xDesc);
        if (!name)
        {
            return call();
        }
        ReportSpaces(*name, workSpaceSizeInBytes, reserveSpaceSizeInBytes);
        LibraryCallScope scope(*name, __builtin_return_address(0));
        return call();
    }

    cudnnStatus_t cudnnBatchNormalizationForwardInference(
        cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
        const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,
        void* y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
        const void* bnBias, const void* estimatedMean, const void* estimatedVariance,
        double epsilon)
    {
        static auto real = Real<decltype(&cudnnBatchNormalizationForwardInference)>(
            "cudnnBatchNormalizationForwardInference");
        auto call = [&]
        {
            return real(handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc,
                        bnScale, bnBias, estimatedMean, estimatedVariance, epsilon);
        };
        const auto name =
            BatchNormName("cudnnBatchNormFwdInference", mode, CUDNN_BATCHNORM_OPS_BN, xDesc);
        if (!name)
        {
            return call();
        }
        LibraryCallScope scope(*name, __builtin_return_address(0));
        return call();
    }

} // extern "C"
