// gpu_profiler_gpu: the part of gpu_profiler that touches the GPU.
//   device-info      prints "meta" lines (raw_log.h) naming the GPU, driver and libraries
//   replay FILE      runs every replayable op of a missing-ops file (bridge --missing)
//                    with random data; run under the recorder, which measures them.
#include "gpu_model/profile/gemm_signature.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <vector>

using phantora::profile::DataTypeBytes;
using phantora::profile::GemmSignature;

namespace
{

void Cuda(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
    {
        throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
    }
}

void Blas(cublasStatus_t s, const std::string& what)
{
    if (s != CUBLAS_STATUS_SUCCESS)
    {
        throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(s)));
    }
}

int DeviceInfo()
{
    cudaDeviceProp p{};
    Cuda(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    std::string name = p.name;
    // "NVIDIA H100 80GB HBM3" -> "H100": the model the scenario's [gpu] model names.
    std::string model = name.starts_with("NVIDIA ") ? name.substr(7) : name;
    model = model.substr(0, model.find(' '));
    fmt::print("meta\tgpu_name\t{}\n", name);
    fmt::print("meta\tgpu_model\t{}\n", model);
    fmt::print("meta\tcompute_capability\t{}.{}\n", p.major, p.minor);
    fmt::print("meta\tsm_count\t{}\n", p.multiProcessorCount);
    fmt::print("meta\tmemory_bytes\t{}\n", p.totalGlobalMem);
    fmt::print("meta\tl2_bytes\t{}\n", p.l2CacheSize);
    fmt::print("meta\tcuda_driver_version\t{}\n", driver);
    fmt::print("meta\tcuda_runtime_version\t{}\n", runtime);
    fmt::print("meta\tcublas_version\t{}.{}.{}\n", major, minor, patch);
    fmt::print("meta\tcublaslt_version\t{}\n", cublasLtGetVersion());
    return 0;
}

/// The cuBLAS operation a signature's letter names (cuda_abi/cuda_type_names.h).
cublasOperation_t OperationOf(char op)
{
    return op == 'N' ? CUBLAS_OP_N : (op == 'C' ? CUBLAS_OP_C : CUBLAS_OP_T);
}

cudaDataType TypeOf(const std::string& t)
{
    if (t == "bf16")
        return CUDA_R_16BF;
    if (t == "f16")
        return CUDA_R_16F;
    if (t == "f32")
        return CUDA_R_32F;
    if (t == "f64")
        return CUDA_R_64F;
    if (t == "e4m3")
        return CUDA_R_8F_E4M3;
    if (t == "e5m2")
        return CUDA_R_8F_E5M2;
    if (t == "i8")
        return CUDA_R_8I;
    throw std::runtime_error("data type " + t + " cannot be replayed");
}

/// Device memory of random values in [-1, 1) of one type; grows as bigger GEMMs come.
class RandomBuffer
{
public:
    void* Get(size_t elems, const std::string& type)
    {
        const size_t bytes = elems * static_cast<size_t>(DataTypeBytes(type));
        if (bytes > m_bytes || type != m_type)
        {
            m_ptr.reset();
            void* p = nullptr;
            Cuda(cudaMalloc(&p, bytes), "cudaMalloc");
            m_ptr.reset(p);
            m_bytes = bytes;
            m_type = type;
            Fill(p, elems, type);
        }
        return m_ptr.get();
    }

private:
    /// One random block of values, copied over the whole buffer: random enough for the
    /// tensor cores (no zeros, no denormals), and fast for buffers of billions of elements.
    static void Fill(void* dev, size_t elems, const std::string& type)
    {
        const size_t width = static_cast<size_t>(DataTypeBytes(type));
        const size_t block = std::min<size_t>(elems, size_t{1} << 20);
        std::mt19937 rng(12345);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<unsigned char> host(block * width);
        for (size_t i = 0; i < block; ++i)
        {
            const float v = u(rng);
            if (type == "bf16")
                reinterpret_cast<__nv_bfloat16*>(host.data())[i] = __float2bfloat16(v);
            else if (type == "f16")
                reinterpret_cast<__half*>(host.data())[i] = __float2half(v);
            else if (type == "f32")
                reinterpret_cast<float*>(host.data())[i] = v;
            else if (type == "f64")
                reinterpret_cast<double*>(host.data())[i] = v;
            else // 8-bit types: small magnitudes, never NaN
                host[i] = static_cast<unsigned char>(rng() & 0x37);
        }
        auto* d = static_cast<unsigned char*>(dev);
        Cuda(cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice), "fill");
        for (size_t done = block; done < elems;)
        {
            const size_t n = std::min(done, elems - done);
            Cuda(cudaMemcpy(d + done * width, d, n * width, cudaMemcpyDeviceToDevice), "fill");
            done += n;
        }
    }
    struct Free
    {
        void operator()(void* p) const { cudaFree(p); }
    };
    std::unique_ptr<void, Free> m_ptr;
    size_t m_bytes{0};
    std::string m_type;
};

struct Replayer
{
    cublasHandle_t blas{nullptr};
    cublasLtHandle_t lt{nullptr};
    RandomBuffer a, b, c, bias;
    void* workspace{nullptr};
    static constexpr size_t kWorkspace = 32u << 20;

    Replayer()
    {
        Blas(cublasCreate(&blas), "cublasCreate");
        Blas(cublasLtCreate(&lt), "cublasLtCreate");
        Cuda(cudaMalloc(&workspace, kWorkspace), "cudaMalloc workspace");
        Blas(cublasSetWorkspace(blas, workspace, kWorkspace), "cublasSetWorkspace");
    }
    ~Replayer()
    {
        cudaFree(workspace);
        cublasLtDestroy(lt);
        cublasDestroy(blas);
    }

    void Run(const GemmSignature& g)
    {
        const auto opA = OperationOf(g.opA);
        const auto opB = OperationOf(g.opB);
        const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
        const int lda = g.opA == 'N' ? m : k, ldb = g.opB == 'N' ? k : n, ldc = m;
        const size_t batch = static_cast<size_t>(g.batch);
        void* A = a.Get(static_cast<size_t>(g.m * g.k) * batch, g.a);
        void* B = b.Get(static_cast<size_t>(g.k * g.n) * batch, g.b);
        void* C = c.Get(static_cast<size_t>(g.m * g.n) * batch, g.c);
        const float one = 1.0f, zero = 0.0f;
        const std::string what = g.Name();
        if (g.api == "cublasGemmEx")
        {
            Blas(cublasGemmEx(blas, opA, opB, m, n, k, &one, A, TypeOf(g.a), lda, B, TypeOf(g.b),
                              ldb, &zero, C, TypeOf(g.c), ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 what);
        }
        else if (g.api == "cublasGemmStridedBatchedEx")
        {
            Blas(cublasGemmStridedBatchedEx(blas, opA, opB, m, n, k, &one, A, TypeOf(g.a), lda,
                                            g.m * g.k, B, TypeOf(g.b), ldb, g.k * g.n, &zero, C,
                                            TypeOf(g.c), ldc, g.m * g.n, static_cast<int>(g.batch),
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 what);
        }
        else if (g.api == "cublasSgemm")
        {
            Blas(cublasSgemm(blas, opA, opB, m, n, k, &one, static_cast<float*>(A), lda,
                             static_cast<float*>(B), ldb, &zero, static_cast<float*>(C), ldc),
                 what);
        }
        else if (g.api == "cublasSgemmStridedBatched")
        {
            Blas(cublasSgemmStridedBatched(blas, opA, opB, m, n, k, &one, static_cast<float*>(A),
                                           lda, g.m * g.k, static_cast<float*>(B), ldb, g.k * g.n,
                                           &zero, static_cast<float*>(C), ldc, g.m * g.n,
                                           static_cast<int>(g.batch)),
                 what);
        }
        else if (g.api == "cublasLtMatmul")
        {
            RunLt(g, A, B, C, lda, ldb, ldc);
        }
        else
        {
            throw std::runtime_error("cannot replay " + g.api);
        }
    }

    void RunLt(const GemmSignature& g, void* A, void* B, void* C, int lda, int ldb, int ldc)
    {
        const std::string what = g.Name();
        cublasLtMatmulDesc_t desc = nullptr;
        Blas(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), what);
        std::unique_ptr<cublasLtMatmulDescOpaque_t, decltype(&cublasLtMatmulDescDestroy)> descGuard(
            desc, &cublasLtMatmulDescDestroy);
        const int32_t ta = OperationOf(g.opA);
        const int32_t tb = OperationOf(g.opB);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
        const uint32_t epilogue = g.epilogue >= 0
                                      ? static_cast<uint32_t>(g.epilogue)
                                      : static_cast<uint32_t>(CUBLASLT_EPILOGUE_DEFAULT);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue);
        if (epilogue & CUBLASLT_EPILOGUE_BIAS)
        {
            void* bp = bias.Get(static_cast<size_t>(g.m), g.c);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp);
        }
        auto layout = [&](const std::string& type, uint64_t rows, uint64_t cols, int64_t ld)
        {
            cublasLtMatrixLayout_t l = nullptr;
            Blas(cublasLtMatrixLayoutCreate(&l, TypeOf(type), rows, cols, ld), what);
            if (g.batch > 1)
            {
                const int32_t count = static_cast<int32_t>(g.batch);
                const int64_t stride = static_cast<int64_t>(rows * cols);
                cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                 sizeof count);
                cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof stride);
            }
            return std::unique_ptr<cublasLtMatrixLayoutOpaque_t,
                                   decltype(&cublasLtMatrixLayoutDestroy)>(
                l, &cublasLtMatrixLayoutDestroy);
        };
        const auto m = static_cast<uint64_t>(g.m), n = static_cast<uint64_t>(g.n),
                   k = static_cast<uint64_t>(g.k);
        auto la = g.opA == 'N' ? layout(g.a, m, k, lda) : layout(g.a, k, m, lda);
        auto lb = g.opB == 'N' ? layout(g.b, k, n, ldb) : layout(g.b, n, k, ldb);
        auto lc = layout(g.c, m, n, ldc);
        cublasLtMatmulPreference_t pref = nullptr;
        Blas(cublasLtMatmulPreferenceCreate(&pref), what);
        std::unique_ptr<cublasLtMatmulPreferenceOpaque_t,
                        decltype(&cublasLtMatmulPreferenceDestroy)>
            prefGuard(pref, &cublasLtMatmulPreferenceDestroy);
        const size_t ws = kWorkspace;
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws);
        cublasLtMatmulHeuristicResult_t h{};
        int found = 0;
        Blas(cublasLtMatmulAlgoGetHeuristic(lt, desc, la.get(), lb.get(), lc.get(), lc.get(), pref,
                                            1, &h, &found),
             what);
        if (found < 1)
        {
            throw std::runtime_error(what + ": cuBLASLt has no algorithm for it");
        }
        const float one = 1.0f, zero = 0.0f;
        Blas(cublasLtMatmul(lt, desc, &one, A, la.get(), B, lb.get(), &zero, C, lc.get(), C,
                            lc.get(), &h.algo, workspace, kWorkspace, nullptr),
             what);
    }
};

/// Copies and memsets as the interposer names them (direction, bytes), between device
/// memory and pinned host memory (what asynchronous copies in frameworks use).
class CopyReplayer
{
public:
    void Run(const std::string& direction, uint64_t bytes)
    {
        Grow(bytes);
        if (direction == "memset")
            Cuda(cudaMemsetAsync(m_dev.get(), 0, bytes, nullptr), "cudaMemsetAsync");
        else if (direction == "HtoD")
            Cuda(cudaMemcpyAsync(m_dev.get(), m_host.get(), bytes, cudaMemcpyHostToDevice), "HtoD");
        else if (direction == "DtoH")
            Cuda(cudaMemcpyAsync(m_host.get(), m_dev.get(), bytes, cudaMemcpyDeviceToHost), "DtoH");
        else if (direction == "DtoD")
            Cuda(cudaMemcpyAsync(m_dev2.get(), m_dev.get(), bytes, cudaMemcpyDeviceToDevice),
                 "DtoD");
        else if (direction == "HtoH")
            Cuda(cudaMemcpyAsync(m_host2.get(), m_host.get(), bytes, cudaMemcpyHostToHost), "HtoH");
        else
            throw std::runtime_error("cannot replay a copy of direction " + direction);
    }

private:
    void Grow(uint64_t bytes)
    {
        if (bytes <= m_bytes)
            return;
        m_dev.reset(), m_dev2.reset(), m_host.reset(), m_host2.reset();
        void* p = nullptr;
        Cuda(cudaMalloc(&p, bytes), "cudaMalloc");
        m_dev.reset(p);
        Cuda(cudaMalloc(&p, bytes), "cudaMalloc");
        m_dev2.reset(p);
        Cuda(cudaMallocHost(&p, bytes), "cudaMallocHost");
        m_host.reset(p);
        Cuda(cudaMallocHost(&p, bytes), "cudaMallocHost");
        m_host2.reset(p);
        m_bytes = bytes;
    }
    struct FreeDev
    {
        void operator()(void* p) const { cudaFree(p); }
    };
    struct FreeHost
    {
        void operator()(void* p) const { cudaFreeHost(p); }
    };
    std::unique_ptr<void, FreeDev> m_dev, m_dev2;
    std::unique_ptr<void, FreeHost> m_host, m_host2;
    uint64_t m_bytes{0};
};

int Replay(const std::string& file, int warmup, int iterations)
{
    std::ifstream in(file);
    if (!in)
    {
        throw std::runtime_error("cannot open " + file);
    }
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(in);
    }
    catch (const nlohmann::json::exception& e)
    {
        throw std::runtime_error(fmt::format("{}: not JSON: {}", file, e.what()));
    }
    const nlohmann::json& ops = j.is_array() ? j : j.at("ops");
    using Discard = void (*)(int);
    auto discard = reinterpret_cast<Discard>(dlsym(RTLD_DEFAULT, "phantora_recorder_discard"));
    if (!discard)
    {
        std::fprintf(stderr, "warning: not under the recorder (run as gpu_profiler replay); "
                             "warm-ups will not be told apart\n");
    }
    Replayer r;
    CopyReplayer copies;
    int done = 0, skipped = 0;
    for (const auto& op : ops)
    {
        const std::string kind = op.value("kind", "");
        const std::string name = op.value("name", "");
        if (kind == "memcpy" || kind == "memset")
        {
            const uint64_t bytes = op.value("bytes", uint64_t{0});
            try
            {
                if (discard)
                    discard(1);
                for (int i = 0; i < warmup; ++i)
                    copies.Run(name, bytes);
                Cuda(cudaDeviceSynchronize(), "warm-up");
                if (discard)
                    discard(0);
                for (int i = 0; i < iterations; ++i)
                    copies.Run(name, bytes);
                Cuda(cudaDeviceSynchronize(), "replay");
                ++done;
            }
            catch (const std::exception& e)
            {
                if (discard)
                    discard(0);
                std::fprintf(stderr, "%s %s %llu B: skipped: %s\n", kind.c_str(), name.c_str(),
                             static_cast<unsigned long long>(bytes), e.what());
                ++skipped;
            }
            continue;
        }
        if (kind == "cudnn")
        {
            continue; // gpu_profiler runs replay_cudnn.py for these
        }
        if (kind != "gemm")
        {
            ++skipped;
            continue;
        }
        auto g = GemmSignature::Parse(name);
        if (!g)
        {
            std::fprintf(stderr, "%s: \"%s\" is not a GEMM signature; skipped\n", file.c_str(),
                         name.c_str());
            ++skipped;
            continue;
        }
        try
        {
            if (discard)
                discard(1);
            for (int i = 0; i < warmup; ++i)
                r.Run(*g);
            Cuda(cudaDeviceSynchronize(), "warm-up");
            if (discard)
                discard(0);
            for (int i = 0; i < iterations; ++i)
                r.Run(*g);
            Cuda(cudaDeviceSynchronize(), "replay");
            ++done;
        }
        catch (const std::exception& e)
        {
            if (discard)
                discard(0);
            std::fprintf(stderr, "%s: skipped: %s\n", name.c_str(), e.what());
            ++skipped;
        }
    }
    std::fprintf(stderr, "replayed %d ops x %d (after %d warm-ups), skipped %d ops\n", done,
                 iterations, warmup, skipped);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"gpu_profiler's GPU worker (run by gpu_profiler)"};
    app.require_subcommand(1);
    auto* info = app.add_subcommand("device-info", "print the GPU's and libraries' versions");
    auto* replay = app.add_subcommand("replay", "run the replayable ops of a missing-ops file");
    std::string file;
    int warmup = 5, iterations = 20;
    replay->add_option("file", file, "missing-ops JSON")->required();
    replay->add_option("--warmup", warmup, "unmeasured runs of each op first");
    replay->add_option("--iterations", iterations, "measured runs of each op");
    CLI11_PARSE(app, argc, argv);
    try
    {
        if (*info)
            return DeviceInfo();
        return Replay(file, warmup, iterations);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "gpu_profiler_gpu: %s\n", e.what());
        return 1;
    }
}
