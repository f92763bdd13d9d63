// cuDNN's backend (graph) API, as cudnn-frontend drives it for PyTorch's attention and
// convolutions.  Descriptors keep what the program sets and give it back; an operation
// graph is named at Finalize by its signature (gpu_model/profile/cudnn_call_signature.h),
// and the engines, configurations and plans made for it carry that name; each
// cudnnBackendExecute is one op on the handle's stream, timed by the bridge like a GEMM.
//
// What the simulator answers itself:
//   - heuristics offer one engine configuration (engine 0), with no knobs and no
//     numerical or behaviour notes, so every filter a framework applies keeps it;
//   - an operation graph has kEngineCount engines: any global index below it finalises
//     (cudnn-frontend's fallback lists ask for engines 0, 1 and 28);
//   - a plan's workspace is GraphSignature::workspaceBytes (deterministic, documented
//     there), which the program allocates, so memory peaks include it.
// A graph the simulator does not recognise ends the rank at its Finalize, naming its
// operations: timing it by a guess would be silently wrong.
#include "cuda_state.h"
#include "cudnn_state.h"
#include "hook_scope.h"

#include <cstring>
#include <cudnn_graph.h>
#include <fmt/format.h>
#include <string>
#include <vector>

using namespace phantora;
using namespace phantora::interposer;
using cudnn_state::BackendObject;

namespace
{

constexpr int64_t kEngineCount = 64;

cudnnStatus_t Fail(cudnnStatus_t status, std::string message)
{
    cudnn_state::SetLastError(std::move(message));
    return status;
}

/// Makes \p dst (a descriptor the program created) what \p src's attribute holds.
void FillFrom(BackendObject& dst, const BackendObject& src)
{
    dst.descriptor = src.descriptor;
    dst.signature = src.signature;
    dst.graph = src.graph;
    dst.engineIndex = src.engineIndex;
}

/// The engine an engine configuration (or a plan's) stands for, as a fresh object to
/// copy into the program's descriptor.
BackendObject EngineOf(const BackendObject& cfg)
{
    BackendObject engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    engine.descriptor.SetValues<const void*>(CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, {cfg.graph});
    engine.descriptor.SetValues<int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64,
                                         {cfg.engineIndex});
    engine.descriptor.SetFinalized(true);
    engine.signature = cfg.signature;
    engine.graph = cfg.graph;
    engine.engineIndex = cfg.engineIndex;
    return engine;
}

BackendObject ConfigOf(const BackendObject& from)
{
    BackendObject cfg(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cfg.descriptor.SetFinalized(true);
    cfg.signature = from.signature;
    cfg.graph = from.graph;
    cfg.engineIndex = from.engineIndex;
    return cfg;
}

/// Answers a GetAttribute with \p values of \p answerType: the count always, the
/// elements up to \p requested.
template <class T>
cudnnStatus_t Answer(cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                     void* elements, cudnnBackendAttributeType_t answerType,
                     const std::vector<T>& values)
{
    if (type != answerType)
    {
        return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
    }
    if (count)
    {
        *count = static_cast<int64_t>(values.size());
    }
    const auto n = std::min<int64_t>(requested, static_cast<int64_t>(values.size()));
    if (n > 0)
    {
        if (!elements)
        {
            return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
        }
        std::memcpy(elements, values.data(), sizeof(T) * static_cast<std::size_t>(n));
    }
    return CUDNN_STATUS_SUCCESS;
}

/// Fills the program's descriptors in \p elements with \p sources (GetAttribute of a
/// descriptor-valued attribute: the caller creates them, cuDNN fills them).
cudnnStatus_t AnswerDescriptors(cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                                void* elements, const std::vector<BackendObject>& sources)
{
    if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
    {
        return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
    }
    if (count)
    {
        *count = static_cast<int64_t>(sources.size());
    }
    const auto n = std::min<int64_t>(requested, static_cast<int64_t>(sources.size()));
    if (n > 0 && !elements)
    {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    auto** out = static_cast<void**>(elements);
    for (int64_t i = 0; i < n; ++i)
    {
        BackendObject* dst = cudnn_state::FindBackend(out[i]);
        if (!dst)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (dst->descriptor.Type() != sources[i].descriptor.Type())
        {
            return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
        }
        FillFrom(*dst, sources[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

/// The attributes the simulator works out (heuristics, engines, plans); nullopt for
/// those that are only stored.
std::optional<cudnnStatus_t> Synthesised(const BackendObject& o, cudnnBackendAttributeName_t name,
                                         cudnnBackendAttributeType_t type, int64_t requested,
                                         int64_t* count, void* elements)
{
    const int64_t workspace = o.signature ? o.signature->workspaceBytes : 0;
    switch (o.descriptor.Type())
    {
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        if (name == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)
        {
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64,
                                   {kEngineCount});
        }
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS)
        {
            if (!o.descriptor.Finalized())
            {
                return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
            }
            return AnswerDescriptors(type, requested, count, elements, {ConfigOf(o)});
        }
        break;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        switch (name)
        {
        case CUDNN_ATTR_ENGINECFG_ENGINE:
            return AnswerDescriptors(type, requested, count, elements, {EngineOf(o)});
        case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64, {workspace});
        case CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED:
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64, {0});
        case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
            if (!o.descriptor.Find(name))
            {
                return AnswerDescriptors(type, requested, count, elements, {});
            }
            break;
        case CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO:
            return AnswerDescriptors(type, requested, count, elements, {});
        default:
            break;
        }
        break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
        switch (name)
        {
        case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64,
                                   {o.engineIndex});
        case CUDNN_ATTR_ENGINE_KNOB_INFO:
        case CUDNN_ATTR_ENGINE_LAYOUT_INFO:
            return AnswerDescriptors(type, requested, count, elements, {});
        case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
            return Answer<int32_t>(type, requested, count, elements, CUDNN_TYPE_NUMERICAL_NOTE, {});
        case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
            return Answer<int32_t>(type, requested, count, elements, CUDNN_TYPE_BEHAVIOR_NOTE, {});
        default:
            break;
        }
        break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        switch (name)
        {
        case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64, {workspace});
        case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
            return AnswerDescriptors(type, requested, count, elements, {ConfigOf(o)});
        case CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS:
        case CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS:
            return Answer<int64_t>(type, requested, count, elements, CUDNN_TYPE_INT64, {});
        case CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION:
        {
            const std::string json =
                fmt::format(R"({{"simulated":"{}","engine":{}}})",
                            o.signature ? o.signature->name : "", o.engineIndex);
            std::vector<char> text(json.begin(), json.end());
            text.push_back('\0');
            return Answer<char>(type, requested, count, elements, CUDNN_TYPE_CHAR, text);
        }
        default:
            break;
        }
        break;
    default:
        break;
    }
    return std::nullopt;
}

/// What Finalize works out: an operation graph's signature, and for the engines,
/// configurations, heuristics and plans made for it, the graph they run.
cudnnStatus_t FinalizeObject(BackendObject& o, const void* handle)
{
    const cudnnBackendDescriptorType_t type = o.descriptor.Type();
    if (type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    {
        cudnn::GraphSignature sig = cudnn::SignatureOfGraph(o.descriptor);
        if (sig.name.empty())
        {
            Fatal(fmt::format("cudnnBackendFinalize: {} is not simulated yet; the program "
                              "built it, so its GPU time cannot be simulated faithfully",
                              sig.unsupported));
        }
        o.signature = std::move(sig);
        o.graph = handle;
        return CUDNN_STATUS_SUCCESS;
    }
    const auto runs = cudnn::RunsAttribute(type);
    if (!runs)
    {
        return CUDNN_STATUS_SUCCESS; // tensors, operations, variant packs: nothing to work out
    }
    if (type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && !o.descriptor.Find(*runs) &&
        o.descriptor.Find(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION))
    {
        Fatal("cudnnBackendFinalize: an execution plan loaded from its JSON representation is "
              "not simulated yet");
    }
    const BackendObject* from = cudnn_state::Referenced(o, *runs);
    if (!from || !from->signature)
    {
        return Fail(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                    "the descriptor refers to no finalised operation graph");
    }
    o.signature = from->signature;
    o.graph = from->graph;
    o.engineIndex = from->engineIndex;
    if (type == CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    {
        const int64_t index =
            o.descriptor.Value<int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX).value_or(0);
        if (index < 0 || index >= kEngineCount)
        {
            return Fail(CUDNN_STATUS_NOT_SUPPORTED,
                        fmt::format("engine {} does not exist (the simulator offers {})", index,
                                    kEngineCount));
        }
        o.engineIndex = index;
    }
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C"
{

    cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                               cudnnBackendDescriptor_t* descriptor)
    {
        HookScope scope;
        if (!descriptor)
        {
            return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
        }
        *descriptor = cudnn_state::CreateBackend(type);
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
    {
        HookScope scope;
        return cudnn_state::DestroyBackend(descriptor) ? CUDNN_STATUS_SUCCESS
                                                       : CUDNN_STATUS_BAD_PARAM;
    }

    cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                           cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type, int64_t count,
                                           const void* elements)
    {
        HookScope scope;
        BackendObject* o = cudnn_state::FindBackend(descriptor);
        if (!o)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (o->descriptor.Finalized())
        {
            return Fail(CUDNN_STATUS_BAD_PARAM, "the descriptor is finalised already");
        }
        if (!o->descriptor.Set(name, type, count, elements, cudnn_state::ShareBackend))
        {
            return Fail(CUDNN_STATUS_BAD_PARAM,
                        fmt::format("attribute {}: {} elements of type {}", static_cast<int>(name),
                                    count, static_cast<int>(type)));
        }
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                           cudnnBackendAttributeName_t name,
                                           cudnnBackendAttributeType_t type,
                                           int64_t requestedElementCount, int64_t* elementCount,
                                           void* arrayOfElements)
    {
        HookScope scope;
        BackendObject* o = cudnn_state::FindBackend(descriptor);
        if (!o || requestedElementCount < 0)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (auto s =
                Synthesised(*o, name, type, requestedElementCount, elementCount, arrayOfElements))
        {
            return *s;
        }
        const cudnn::AttributeValue* v = o->descriptor.Find(name);
        if (!v)
        {
            Fatal(fmt::format("cudnnBackendGetAttribute: attribute {} of a descriptor of type {}, "
                              "which the program never set, is not simulated yet",
                              static_cast<int>(name), static_cast<int>(o->descriptor.Type())));
        }
        if (v->type != type)
        {
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
        }
        if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
        {
            // the program's descriptors become copies of the ones it set
            std::vector<BackendObject> sources;
            for (void* h : o->descriptor.Descriptors(name))
            {
                if (!o->descriptor.Resolve(h))
                {
                    return CUDNN_STATUS_BAD_PARAM;
                }
                // the handle is the object's address, kept alive by the attribute
                sources.push_back(*static_cast<const BackendObject*>(h));
            }
            return AnswerDescriptors(type, requestedElementCount, elementCount, arrayOfElements,
                                     sources);
        }
        if (elementCount)
        {
            *elementCount = v->count;
        }
        const auto n = std::min(requestedElementCount, v->count);
        if (n > 0)
        {
            if (!arrayOfElements)
            {
                return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
            }
            std::memcpy(arrayOfElements, v->bytes.data(),
                        cudnn::ElementSize(type) * static_cast<std::size_t>(n));
        }
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
    {
        HookScope scope;
        BackendObject* o = cudnn_state::FindBackend(descriptor);
        if (!o)
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (o->descriptor.Finalized())
        {
            return CUDNN_STATUS_SUCCESS;
        }
        const cudnnStatus_t s = FinalizeObject(*o, descriptor);
        o->descriptor.SetFinalized(s == CUDNN_STATUS_SUCCESS);
        return s;
    }

    cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                      cudnnBackendDescriptor_t variantPack)
    {
        HookScope scope;
        const cudnnContext* ctx = cudnn_state::FindHandle(handle);
        const BackendObject* p = cudnn_state::FindBackend(plan);
        if (!ctx || !p || !cudnn_state::FindBackend(variantPack))
        {
            return CUDNN_STATUS_BAD_PARAM;
        }
        if (p->descriptor.Type() != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ||
            !p->descriptor.Finalized() || !p->signature)
        {
            return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
        }
        wire::KernelLaunch op;
        op.stream = StreamId(ctx->stream);
        op.name = p->signature->name;
        scope.Client().Post(std::move(op));
        return CUDNN_STATUS_SUCCESS;
    }

} // extern "C"
