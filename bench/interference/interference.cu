// Compute-communication interference on one real GPU: how much a GEMM and a memory-bound
// kernel slow down while an NCCL-like kernel runs beside them, and how much that kernel
// slows down in turn.  NCCL runs each channel as one CTA that moves data between buffers
// in HBM at the link's pace (on an 8-GPU H200 node about 20 GB/s per channel with the
// Simple protocol, 16 channels); the stand-in here is a kernel of N CTAs, one per SM
// (its shared memory keeps a second one off), each copying 256 KiB blocks within HBM and
// waiting between blocks so that it moves at most R GB/s (R = 0: as fast as it can).
//
//   interference [CTAS...] [--rate GBPS] [--reps N] [--smem KIB]
//
// --smem gives each copy CTA that much dynamic shared memory (default 0: like NCCL's, the
// CTAs then share SMs with the compute kernel's; a large value keeps each on an SM of
// its own).
//
// For each CTA count it prints the GEMM's and the stream kernel's time alone and beside
// the copy kernel, and the copy kernel's rate alone and beside each.  Timings are CUDA
// events around --reps back-to-back launches, the median of 5 such batches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <string>
#include <vector>

#define CHECK(x)                                                                                   \
    do                                                                                             \
    {                                                                                              \
        cudaError_t e = (x);                                                                       \
        if (e != cudaSuccess)                                                                      \
        {                                                                                          \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));        \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

namespace
{

constexpr size_t kBlockBytes = 256 << 10;
constexpr int kCopyThreads = 512;

__device__ unsigned long long GlobalTimerNs()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/// The NCCL-like kernel: each CTA copies its own region block by block, paced to
/// \p bytesPerNsPerCta (0: unpaced), until *stop is set; counts the bytes it moved.
__global__ void CommLike(const int4* src, int4* dst, size_t regionInts, double bytesPerNsPerCta,
                         volatile int* stop, unsigned long long* moved)
{
    extern __shared__ char keepOnePerSm[];
    (void)keepOnePerSm;
    const size_t base = blockIdx.x * regionInts;
    const size_t blockInts = kBlockBytes / sizeof(int4);
    const unsigned long long start = GlobalTimerNs();
    unsigned long long bytes = 0;
    size_t off = 0;
    while (!*stop)
    {
        for (size_t i = threadIdx.x; i < blockInts; i += blockDim.x)
        {
            dst[base + off + i] = src[base + off + i];
        }
        __syncthreads();
        off = (off + blockInts) % regionInts;
        bytes += kBlockBytes;
        if (bytesPerNsPerCta > 0)
        {
            const unsigned long long due = start + static_cast<unsigned long long>(bytes / bytesPerNsPerCta);
            while (GlobalTimerNs() < due && !*stop)
            {
            }
        }
    }
    if (threadIdx.x == 0)
    {
        atomicAdd(moved, bytes);
    }
}

/// A memory-bound kernel: a[i] = b[i] + 2 c[i] over large arrays.
__global__ void Triad(float4* a, const float4* b, const float4* c, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    {
        const float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + 2 * y.x, x.y + 2 * y.y, x.z + 2 * y.z, x.w + 2 * y.w);
    }
}

struct Buffers
{
    cublasHandle_t blas{};
    __nv_bfloat16 *ga{}, *gb{}, *gc{};
    int gemmN{8192};
    float4 *ta{}, *tb{}, *tc{};
    size_t triadN{size_t(1) << 27}; // 2 GiB per array
    int4 *src{}, *dst{};
    size_t regionInts{(size_t(64) << 20) / sizeof(int4)}; // 64 MiB per CTA
    int* stop{};     ///< mapped host memory: the host ends the copy kernel
    int* stopDev{};  ///< the same, as the device sees it
    unsigned long long* moved{};
    int sms{0};
    int smemBytes{0}; ///< dynamic shared memory per copy CTA
};

float Median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Median over 5 batches of the time per launch of \p work on \p s, in microseconds.
template <class F> float TimeUs(cudaStream_t s, int reps, F work)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> batches;
    for (int batch = 0; batch < 5; ++batch)
    {
        CHECK(cudaEventRecord(a, s));
        for (int i = 0; i < reps; ++i)
        {
            work(s);
        }
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        batches.push_back(ms * 1000 / reps);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return Median(batches);
}

void Gemm(Buffers& bf, cudaStream_t s)
{
    const float one = 1, zero = 0;
    cublasSetStream(bf.blas, s);
    cublasGemmEx(bf.blas, CUBLAS_OP_N, CUBLAS_OP_N, bf.gemmN, bf.gemmN, bf.gemmN, &one, bf.ga,
                 CUDA_R_16BF, bf.gemmN, bf.gb, CUDA_R_16BF, bf.gemmN, &zero, bf.gc, CUDA_R_16BF,
                 bf.gemmN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

void TriadOn(Buffers& bf, cudaStream_t s)
{
    Triad<<<bf.sms * 8, 512, 0, s>>>(bf.ta, bf.tb, bf.tc, bf.triadN);
    CHECK(cudaGetLastError());
}

/// Starts the copy kernel with \p ctas CTAs on \p s; returns the launch time.
void StartComm(Buffers& bf, cudaStream_t s, int ctas, double gbps)
{
    *reinterpret_cast<volatile int*>(bf.stop) = 0;
    CHECK(cudaMemsetAsync(bf.moved, 0, sizeof(unsigned long long), s));
    const int smem = bf.smemBytes;
    CHECK(cudaFuncSetAttribute(CommLike, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CommLike<<<ctas, kCopyThreads, smem, s>>>(bf.src, bf.dst, bf.regionInts, gbps, bf.stopDev,
                                              bf.moved);
    CHECK(cudaGetLastError());
}

/// Stops it and returns its bytes per second over \p seconds.
double StopComm(Buffers& bf, cudaStream_t s, double seconds)
{
    *reinterpret_cast<volatile int*>(bf.stop) = 1;
    CHECK(cudaStreamSynchronize(s));
    unsigned long long moved = 0;
    CHECK(cudaMemcpy(&moved, bf.moved, sizeof moved, cudaMemcpyDeviceToHost));
    return static_cast<double>(moved) / seconds;
}

} // namespace

int main(int argc, char** argv)
{
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    std::vector<int> ctaCounts;
    double rate = 20.0; // GB/s per CTA, NCCL Simple on NVLink
    int reps = 20;
    int smemKib = 0;
    for (int i = 1; i < argc; ++i)
    {
        if (!std::strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--smem") && i + 1 < argc)
            smemKib = std::atoi(argv[++i]);
        else
            ctaCounts.push_back(std::atoi(argv[i]));
    }
    if (ctaCounts.empty())
        ctaCounts = {1, 4, 8, 16, 24, 32};
    Buffers bf;
    bf.smemBytes = smemKib * 1024;
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    bf.sms = prop.multiProcessorCount;
    cublasCreate(&bf.blas);
    const size_t g = size_t(bf.gemmN) * bf.gemmN;
    CHECK(cudaMalloc(&bf.ga, g * 2));
    CHECK(cudaMalloc(&bf.gb, g * 2));
    CHECK(cudaMalloc(&bf.gc, g * 2));
    CHECK(cudaMemset(bf.ga, 0x3c, g * 2));
    CHECK(cudaMemset(bf.gb, 0x3c, g * 2));
    CHECK(cudaMalloc(&bf.ta, bf.triadN * sizeof(float4)));
    CHECK(cudaMalloc(&bf.tb, bf.triadN * sizeof(float4)));
    CHECK(cudaMalloc(&bf.tc, bf.triadN * sizeof(float4)));
    CHECK(cudaMemset(bf.tb, 0, bf.triadN * sizeof(float4)));
    CHECK(cudaMemset(bf.tc, 0, bf.triadN * sizeof(float4)));
    const int maxCtas = *std::max_element(ctaCounts.begin(), ctaCounts.end());
    CHECK(cudaMalloc(&bf.src, bf.regionInts * sizeof(int4) * maxCtas));
    CHECK(cudaMalloc(&bf.dst, bf.regionInts * sizeof(int4) * maxCtas));
    CHECK(cudaHostAlloc(&bf.stop, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(&bf.stopDev, bf.stop, 0));
    CHECK(cudaMalloc(&bf.moved, sizeof(unsigned long long)));
    cudaStream_t work, comm;
    CHECK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking));

    auto gemm = [&](cudaStream_t s) { Gemm(bf, s); };
    auto triad = [&](cudaStream_t s) { TriadOn(bf, s); };
    TimeUs(work, 3, gemm); // warm-up
    const float gemmAlone = TimeUs(work, reps, gemm);
    const float triadAlone = TimeUs(work, reps, triad);
    std::printf("gpu %s, %d SMs; gemm %dx%dx%d bf16 alone %.1f us (%.0f TFLOP/s); triad %.2f GB "
                "alone %.1f us (%.0f GB/s)\n",
                prop.name, bf.sms, bf.gemmN, bf.gemmN, bf.gemmN, gemmAlone,
                2.0 * bf.gemmN * bf.gemmN * bf.gemmN / gemmAlone / 1e6,
                3.0 * bf.triadN * sizeof(float4) / 1e9, triadAlone,
                3.0 * bf.triadN * sizeof(float4) / triadAlone / 1e3);
    std::printf("ctas rate_GBps_per_cta comm_alone_GBps gemm_us gemm_slowdown comm_with_gemm_GBps "
                "triad_us triad_slowdown comm_with_triad_GBps\n");
    for (int ctas : ctaCounts)
    {
        const double bytesPerNs = rate; // GB/s == bytes/ns
        // alone: half a second of copying
        StartComm(bf, comm, ctas, bytesPerNs);
        cudaEvent_t t0, t1;
        cudaEventCreate(&t0);
        cudaEventCreate(&t1);
        auto pause = [&](int ms)
        {
            cudaEventRecord(t0, work);
            const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
            while (std::chrono::steady_clock::now() < end)
            {
            }
        };
        const auto a0 = std::chrono::steady_clock::now();
        pause(300);
        const double alone =
            StopComm(bf, comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count());
        // beside the GEMM
        StartComm(bf, comm, ctas, bytesPerNs);
        const auto g0 = std::chrono::steady_clock::now();
        const float gemmWith = TimeUs(work, reps, gemm);
        const double commGemm =
            StopComm(bf, comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count());
        // beside the triad
        StartComm(bf, comm, ctas, bytesPerNs);
        const auto r0 = std::chrono::steady_clock::now();
        const float triadWith = TimeUs(work, reps, triad);
        const double commTriad =
            StopComm(bf, comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count());
        std::printf("%d %.1f %.1f %.1f %.4f %.1f %.1f %.4f %.1f\n", ctas, rate, alone / 1e9,
                    gemmWith, gemmWith / gemmAlone, commGemm / 1e9, triadWith,
                    triadWith / triadAlone, commTriad / 1e9);
        std::fflush(stdout);
        cudaEventDestroy(t0);
        cudaEventDestroy(t1);
    }
    return 0;
}
