// libphantora_recorder.so: preloaded into a program that runs for real on one GPU.
// CUPTI's activity records give every kernel's, copy's and memset's GPU start and
// end; the cuBLAS/cuBLASLt entry points are interposed here so the kernels a GEMM
// launches are tagged (CUPTI external correlation) with the GEMM's signature, named
// exactly as the simulation's interposer names it; cuDNN executes are tagged the same
// way (recorder_cudnn_hooks.cc); kernel launches are tagged with their argument facts
// (recorder_launch_hooks.cc).  At exit one line per op goes to
// $PHANTORA_RECORD_OUT (raw_log.h describes the format).
#include "cuda_abi/cuda_type_names.h"
#include "graph_node_attribution.h"
#include "host_time/host_boundary.h"
#include "recorder_call_scope.h"
#include "recorder_host_gaps.h"
#include "recorder_launch_args.h"
#include "recorder_real_symbol.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublasLt.h>
#include <cublas_api.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <string>
#include <unistd.h>
#include <vector>

using phantora::recorder::LibraryCallScope;

namespace
{

struct DeviceOp
{
    char kind; ///< 'k' kernel, 'c' memcpy, 's' memset
    std::string name;
    int32_t grid[3]{}, block[3]{};
    int32_t sharedMem{0};
    uint64_t bytes{0};
    uint64_t start{0}, end{0};
    uint32_t correlation{0};
    uint64_t graphNode{0}; ///< the graph node that ran it; 0 for an eager activity
};

struct State
{
    std::mutex mutex;
    std::vector<DeviceOp> ops;
    std::map<uint32_t, uint64_t> external;    ///< CUPTI correlation id -> our library call id
    std::map<uint32_t, uint64_t> launchArgs;  ///< CUPTI correlation id -> argument facts' id
    std::map<uint64_t, std::string> callName; ///< library call id -> signature
    /// Graph nodes -> the library call or launch captured into them (graph replays).
    phantora::recorder::GraphNodeAttribution graphNodes;
    std::atomic<uint64_t> nextCall{1};
    std::atomic<bool> written{false};
    uint64_t dropped{0};
};

State& S()
{
    static State* s = new State; // never destroyed: CUPTI may call back during exit
    return *s;
}

thread_local int t_callDepth = 0;
/// The id of the outermost library call this thread is in (0: none), for the graph nodes
/// its launches create while a stream is captured.
thread_local uint64_t t_currentCall = 0;
std::atomic<bool> g_discard{false}; ///< warm-up calls of the replay tool: run, never saved
/// Set in a child forked from the recorded process: CUPTI's threads were not forked, so a
/// flush would wait for them forever, and the ops are the parent's to write.
std::atomic<bool> g_forkedChild{false};

void Check(CUptiResult r, const char* what)
{
    if (r != CUPTI_SUCCESS)
    {
        const char* msg = nullptr;
        cuptiGetResultString(r, &msg);
        std::fprintf(stderr, "phantora recorder: %s failed: %s\n", what, msg ? msg : "?");
    }
}

std::string Demangle(const char* mangled)
{
    if (!mangled)
    {
        return "?";
    }
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
    return status == 0 && d ? d.get() : mangled;
}

const char* CopyKindName(uint8_t kind)
{
    switch (kind)
    {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "other";
    }
}

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = kBufferBytes;
    *maxNumRecords = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize)
{
    State& s = S();
    std::lock_guard lock(s.mutex);
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS)
    {
        switch (rec->kind)
        {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        {
            auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
            DeviceOp op{'k', Demangle(k->name)};
            op.grid[0] = k->gridX, op.grid[1] = k->gridY, op.grid[2] = k->gridZ;
            op.block[0] = k->blockX, op.block[1] = k->blockY, op.block[2] = k->blockZ;
            op.sharedMem = k->dynamicSharedMemory;
            op.start = k->start, op.end = k->end, op.correlation = k->correlationId;
            op.graphNode = k->graphNodeId;
            s.ops.push_back(std::move(op));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY:
        {
            auto* c = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
            DeviceOp op{'c', CopyKindName(c->copyKind)};
            op.bytes = c->bytes, op.start = c->start, op.end = c->end;
            op.correlation = c->correlationId;
            op.graphNode = c->graphNodeId;
            s.ops.push_back(std::move(op));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET:
        {
            auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
            DeviceOp op{'s', "memset"};
            op.bytes = m->bytes, op.start = m->start, op.end = m->end;
            op.correlation = m->correlationId;
            op.graphNode = m->graphNodeId;
            s.ops.push_back(std::move(op));
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        {
            auto* e = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(rec);
            if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
            {
                s.external[e->correlationId] = e->externalId;
            }
            else if (e->externalKind == phantora::recorder::kArgsCorrelation)
            {
                s.launchArgs[e->correlationId] = e->externalId;
            }
            break;
        }
        default:
            break;
        }
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    s.dropped += dropped;
    std::free(buffer);
}

/// The host-time pass's part: its gap lines (recorder_host_gaps.h), if the process made
/// any boundary call.
void WriteHostPart(const char* out)
{
    const std::string path = std::string(out) + "." + std::to_string(getpid()) + ".part";
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    if (!f)
    {
        std::fprintf(stderr, "phantora recorder: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return;
    }
    std::fprintf(f.get(), "meta\tsource\thost-time\n");
    const std::size_t n = phantora::recorder::WriteHostGaps(f.get());
    f.reset();
    if (n == 0)
    {
        std::remove(path.c_str()); // a launcher: nothing of the program ran here
        return;
    }
    std::fprintf(stderr, "phantora recorder: %zu host-time gaps written to %s\n", n, path.c_str());
}

/// Writes the log once: at the first context teardown or at exit, whichever comes first.
void WriteLog()
{
    if (g_forkedChild)
    {
        return;
    }
    State& s = S();
    if (s.written.exchange(true))
    {
        return;
    }
    if (!phantora::recorder::HostOnly())
    {
        cuptiActivityFlushAll(1);
    }
    const char* out = std::getenv("PHANTORA_RECORD_OUT");
    if (!out)
    {
        std::fprintf(stderr, "phantora recorder: PHANTORA_RECORD_OUT is not set; nothing saved\n");
        return;
    }
    if (phantora::recorder::HostOnly())
    {
        WriteHostPart(out);
        return;
    }
    std::lock_guard lock(s.mutex);
    if (s.ops.empty())
    {
        return; // a process that ran nothing on the GPU (a launcher such as torchrun)
    }
    // Each process its own part, which gpu_profiler joins (raw_log.h: RawParts).
    const std::string path = std::string(out) + "." + std::to_string(getpid()) + ".part";
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    if (!f)
    {
        std::fprintf(stderr, "phantora recorder: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return;
    }
    uint32_t cuptiVersion = 0;
    cuptiGetVersion(&cuptiVersion);
    std::fprintf(f.get(), "meta\tcupti_api_version\t%u\n", cuptiVersion);
    if (const char* source = std::getenv("PHANTORA_RECORD_SOURCE"))
    {
        std::fprintf(f.get(), "meta\tsource\t%s\n", source);
    }
    std::fprintf(f.get(), "meta\tdropped_records\t%llu\n",
                 static_cast<unsigned long long>(s.dropped));
    // A library call (GEMM, cuDNN execute) is one op on the simulated stream: from its
    // first kernel's start to its last one's end, gaps between its kernels included, as
    // the stream sees it.
    struct Span
    {
        uint64_t start{~0ull}, end{0};
    };
    std::map<uint64_t, Span> calls;
    uint64_t kernels = 0, withArgs = 0, eagerInCapture = 0;
    for (const DeviceOp& op : s.ops)
    {
        // A graph replay's activity carries the cudaGraphLaunch's correlation, not the
        // captured call's: the node says which call it was (graph_node_attribution.h).
        if (op.graphNode != 0 &&
            s.graphNodes.AddReplayed(op.graphNode, op.correlation, op.start, op.end))
        {
            continue;
        }
        auto ext = s.external.find(op.correlation);
        if (op.graphNode == 0 && ext != s.external.end() && s.graphNodes.Captured(ext->second))
        {
            ++eagerInCapture; // work a captured call ran outside its graph: no sample of it
            continue;
        }
        if (ext != s.external.end() && s.callName.count(ext->second))
        {
            Span& sp = calls[ext->second];
            sp.start = std::min(sp.start, op.start);
            sp.end = std::max(sp.end, op.end);
            continue;
        }
        const unsigned long long d = op.end > op.start ? op.end - op.start : 0;
        if (op.kind == 'k')
        {
            ++kernels;
            // A replayed launch's facts are those its node was captured with.
            uint64_t argsId = 0;
            if (op.graphNode != 0)
            {
                argsId = s.graphNodes.OriginOf(op.graphNode).launchArgs;
            }
            else if (auto tag = s.launchArgs.find(op.correlation); tag != s.launchArgs.end())
            {
                argsId = tag->second;
            }
            const std::string args =
                argsId == 0 ? std::string() : phantora::recorder::LaunchArgsOf(argsId);
            withArgs += args.empty() ? 0 : 1;
            std::fprintf(f.get(), "op\tkernel\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t0\t%llu\t%s\n",
                         op.name.c_str(), op.grid[0], op.grid[1], op.grid[2], op.block[0],
                         op.block[1], op.block[2], op.sharedMem, d, args.c_str());
        }
        else
        {
            std::fprintf(f.get(), "op\t%s\t%s\t0\t0\t0\t0\t0\t0\t0\t%llu\t%llu\n",
                         op.kind == 'c' ? "memcpy" : "memset", op.name.c_str(),
                         static_cast<unsigned long long>(op.bytes), d);
        }
    }
    size_t gemms = 0, cudnn = 0;
    auto writeCall = [&](const std::string& name, uint64_t ns)
    {
        const bool isCudnn = name.starts_with("cudnn");
        ++(isCudnn ? cudnn : gemms);
        std::fprintf(f.get(), "op\t%s\t%s\t0\t0\t0\t0\t0\t0\t0\t0\t%llu\n",
                     isCudnn ? "cudnn" : "gemm", name.c_str(), static_cast<unsigned long long>(ns));
    };
    for (const auto& [id, sp] : calls)
    {
        const std::string& name = s.callName[id];
        if (!name.empty()) // empty: a warm-up
        {
            writeCall(name, sp.end - sp.start);
        }
    }
    // Each replay of a captured call is one sample of it, as an eager call is.
    std::map<uint64_t, size_t> replayedCalls; // call -> replays
    size_t replaySamples = 0;
    for (const auto& sample : s.graphNodes.Samples())
    {
        const std::string& name = s.callName[sample.call];
        if (!name.empty())
        {
            writeCall(name, sample.ns);
            ++replayedCalls[sample.call];
            ++replaySamples;
        }
    }
    if (s.graphNodes.AttributedActivities() != 0 || eagerInCapture != 0)
    {
        std::fprintf(stderr,
                     "phantora recorder: %llu GPU activities of graph replays attributed to %zu "
                     "library calls (%zu samples; %llu eager activities of captured calls left "
                     "out)\n",
                     static_cast<unsigned long long>(s.graphNodes.AttributedActivities()),
                     replayedCalls.size(), replaySamples,
                     static_cast<unsigned long long>(eagerInCapture));
    }
    std::fprintf(stderr,
                 "phantora recorder: %zu GPU activities (%llu kernels outside library calls, %llu "
                 "of them with argument facts, %zu GEMM calls, %zu cuDNN calls) written to %s\n",
                 s.ops.size(), static_cast<unsigned long long>(kernels),
                 static_cast<unsigned long long>(withArgs), gemms, cudnn, path.c_str());
}

/// A graph node created (during stream capture: on the capturing thread, inside the
/// library call's scope and the launch's tag) or cloned (instantiation): remembered so that
/// its replays are filed under what was captured into it.
void OnGraphNode(CUpti_CallbackId id, const CUpti_ResourceData* data)
{
    const auto* graph =
        data ? static_cast<const CUpti_GraphData*>(data->resourceDescriptor) : nullptr;
    if (!graph || !graph->node)
    {
        return;
    }
    uint64_t node = 0;
    if (cuptiGetGraphNodeId(graph->node, &node) != CUPTI_SUCCESS)
    {
        return;
    }
    State& s = S();
    if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)
    {
        const phantora::recorder::GraphNodeAttribution::Origin origin{
            .call = t_currentCall, .launchArgs = phantora::recorder::CurrentLaunchArgs()};
        std::lock_guard lock(s.mutex);
        s.graphNodes.NodeCreated(node, origin);
        return;
    }
    uint64_t original = 0;
    if (!graph->originalNode ||
        cuptiGetGraphNodeId(graph->originalNode, &original) != CUPTI_SUCCESS)
    {
        return;
    }
    std::lock_guard lock(s.mutex);
    s.graphNodes.NodeCloned(node, original);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                         const void* data)
{
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
    {
        WriteLog();
    }
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE && (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
                                                    id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
    {
        OnGraphNode(id, static_cast<const CUpti_ResourceData*>(data));
    }
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !g_forkedChild)
    {
        phantora::recorder::OnDriverApi(id, static_cast<const CUpti_CallbackData*>(data));
    }
}

__attribute__((constructor)) void Start()
{
    if (phantora::recorder::HostOnly())
    {
        // The host-time pass: CUPTI would make every CUDA call dearer (recorder_host_gaps.h).
        std::atexit(WriteLog);
        pthread_atfork(nullptr, nullptr, [] { g_forkedChild = true; });
        return;
    }
    Check(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted), "register buffers");
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernels");
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable memcpy");
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable memset");
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "enable correlation");
    // External correlation records precede API records only: without these two kinds
    // no GEMM's kernels could be told apart.
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable runtime API records");
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enable driver API records");
    static CUpti_SubscriberHandle sub;
    Check(cuptiSubscribe(&sub, OnCallback, nullptr), "subscribe");
    Check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
          "context callback");
    Check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED),
          "graph node callback");
    Check(
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
        "graph node clone callback");
    for (CUpti_CallbackId cbid :
         {CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
          CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
    {
        Check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
              "driver API callbacks (modules and launches)");
    }
    std::atexit(WriteLog);
    pthread_atfork(nullptr, nullptr, [] { g_forkedChild = true; });
}

/// The library's own entry point, behind the one preloaded here.
template <class F> F Real(const char* name, const char* soname)
{
    return phantora::recorder::RealSymbol<F>(name, {soname});
}


// Same text as interposer/cublas_hooks.cc Launch().
std::string GemmName(const char* api, cublasOperation_t ta, cublasOperation_t tb, long long m,
                     long long n, long long k, cudaDataType a, cudaDataType b, cudaDataType c,
                     long long batch)
{
    using phantora::interposer::DataTypeName;
    using phantora::interposer::GemmOperationName;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s(m=%lld,n=%lld,k=%lld,op=%s%s,a=%s,b=%s,c=%s,batch=%lld)",
                  api, m, n, k, GemmOperationName(ta, a), GemmOperationName(tb, b), DataTypeName(a),
                  DataTypeName(b), DataTypeName(c), batch);
    return buf;
}

} // namespace

namespace phantora::recorder
{

LibraryCallScope::LibraryCallScope(const std::string& name, const void* caller)
    : m_boundary(host_time::boundary::Library(name), caller),
      m_outer(t_callDepth++ == 0 && !HostOnly())
{
    if (m_outer)
    {
        State& s = S();
        m_id = s.nextCall++;
        t_currentCall = m_id;
        {
            std::lock_guard lock(s.mutex);
            s.callName[m_id] = g_discard ? std::string() : name;
        }
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, m_id);
    }
}

LibraryCallScope::~LibraryCallScope()
{
    --t_callDepth;
    if (m_outer)
    {
        t_currentCall = 0;
        uint64_t id = 0;
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
    }
}

} // namespace phantora::recorder

extern "C"
{

    /// The replay tool's warm-up switch (found with dlsym; absent when not recording).
    /// While on, everything the calling thread puts on the GPU is run but not saved:
    /// its activities carry an external id that names nothing.
    __attribute__((visibility("default"))) void phantora_recorder_discard(int on)
    {
        State& s = S();
        if (on && !g_discard.exchange(true))
        {
            const uint64_t id = s.nextCall++;
            {
                std::lock_guard lock(s.mutex);
                s.callName[id] = std::string();
            }
            cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
        }
        else if (!on && g_discard.exchange(false))
        {
            uint64_t id = 0;
            cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
        }
    }

    cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                const void* A, cudaDataType Atype, int lda, const void* B,
                                cudaDataType Btype, int ldb, const void* beta, void* C,
                                cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                cublasGemmAlgo_t algo)
    {
        using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void*, const void*, cudaDataType, int,
                                      const void*, cudaDataType, int, const void*, void*,
                                      cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
        static auto real = Real<Fn>("cublasGemmEx", "libcublas.so.13");
        LibraryCallScope scope(
            GemmName("cublasGemmEx", transa, transb, m, n, k, Atype, Btype, Ctype, 1), __builtin_return_address(0));
        return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                    Ctype, ldc, computeType, algo);
    }

    cublasStatus_t cublasGemmStridedBatchedEx(
        cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
        int k, const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
        const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta,
        void* C, cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
        cublasComputeType_t computeType, cublasGemmAlgo_t algo)
    {
        using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void*, const void*, cudaDataType, int,
                                      long long int, const void*, cudaDataType, int, long long int,
                                      const void*, void*, cudaDataType, int, long long int, int,
                                      cublasComputeType_t, cublasGemmAlgo_t);
        static auto real = Real<Fn>("cublasGemmStridedBatchedEx", "libcublas.so.13");
        LibraryCallScope scope(GemmName("cublasGemmStridedBatchedEx", transa, transb, m, n, k,
                                        Atype, Btype, Ctype, batchCount), __builtin_return_address(0));
        return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                    strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
    }

    cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                  const float* A, int lda, const float* B, int ldb,
                                  const float* beta, float* C, int ldc)
    {
        static auto real = Real<decltype(&cublasSgemm_v2)>("cublasSgemm_v2", "libcublas.so.13");
        LibraryCallScope scope(GemmName("cublasSgemm", transa, transb, m, n, k, CUDA_R_32F,
                                        CUDA_R_32F, CUDA_R_32F, 1), __builtin_return_address(0));
        return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }

    cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const float* alpha, const float* A, int lda,
                                             long long int strideA, const float* B, int ldb,
                                             long long int strideB, const float* beta, float* C,
                                             int ldc, long long int strideC, int batchCount)
    {
        static auto real = Real<decltype(&cublasSgemmStridedBatched)>("cublasSgemmStridedBatched",
                                                                      "libcublas.so.13");
        LibraryCallScope scope(GemmName("cublasSgemmStridedBatched", transa, transb, m, n, k,
                                        CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, batchCount), __builtin_return_address(0));
        return real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,
                    C, ldc, strideC, batchCount);
    }

    cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                  const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                  const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                                  const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                  cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                                  void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
    {
        static auto real = Real<decltype(&cublasLtMatmul)>("cublasLtMatmul", "libcublasLt.so.13");
        static auto descGet = Real<decltype(&cublasLtMatmulDescGetAttribute)>(
            "cublasLtMatmulDescGetAttribute", "libcublasLt.so.13");
        static auto layoutGet = Real<decltype(&cublasLtMatrixLayoutGetAttribute)>(
            "cublasLtMatrixLayoutGetAttribute", "libcublasLt.so.13");
        size_t written = 0;
        int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
        uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
        descGet(computeDesc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta, &written);
        descGet(computeDesc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb, &written);
        descGet(computeDesc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, &written);
        struct L
        {
            uint32_t type{CUDA_R_32F};
            uint64_t rows{0}, cols{0};
            int32_t batch{1};
        } a, b, d;
        for (auto [layout, out] : {std::pair{Adesc, &a}, {Bdesc, &b}, {Ddesc, &d}})
        {
            layoutGet(layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &out->type, sizeof out->type, &written);
            layoutGet(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &out->rows, sizeof out->rows, &written);
            layoutGet(layout, CUBLASLT_MATRIX_LAYOUT_COLS, &out->cols, sizeof out->cols, &written);
            layoutGet(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &out->batch, sizeof out->batch,
                      &written);
        }
        using phantora::interposer::DataTypeName;
        using phantora::interposer::GemmOperationName;
        // Same text as interposer/cublaslt_hooks.cc cublasLtMatmul().
        const uint64_t k = ta == CUBLAS_OP_N ? a.cols : a.rows;
        char name[320];
        std::snprintf(name, sizeof name,
                      "cublasLtMatmul(m=%llu,n=%llu,k=%llu,op=%s%s,a=%s,b=%s,c=%s,batch=%d,"
                      "epilogue=%u)",
                      static_cast<unsigned long long>(d.rows),
                      static_cast<unsigned long long>(d.cols), static_cast<unsigned long long>(k),
                      GemmOperationName(static_cast<cublasOperation_t>(ta),
                                        static_cast<cudaDataType>(a.type)),
                      GemmOperationName(static_cast<cublasOperation_t>(tb),
                                        static_cast<cudaDataType>(b.type)),
                      DataTypeName(static_cast<cudaDataType>(a.type)),
                      DataTypeName(static_cast<cudaDataType>(b.type)),
                      DataTypeName(static_cast<cudaDataType>(d.type)), d.batch, epilogue);
        LibraryCallScope scope(name, __builtin_return_address(0));
        return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                    algo, workspace, workspaceSizeInBytes, stream);
    }

} // extern "C"
