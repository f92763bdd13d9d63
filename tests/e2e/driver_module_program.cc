// Kernels loaded and launched through the driver API, as PyTorch's NVRTC-compiled
// elementwise kernels and Triton's are: the entry points come from
// cudaGetDriverEntryPointByVersion (no link to libcuda), the module is PTX text.  Prints what each
// call answered and how long the launches took between two events.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace
{

// driver_scale(float* x, int n): x[i] *= 2 (valid PTX, so the program runs on a GPU too).
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry driver_scale(.param .u64 x, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<5>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r2, %r2, %r3, %r4;
    setp.ge.s32 %p, %r2, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r2, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.f32 %f1, [%rd2];
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd2], %f2;
DONE:
    ret;
}
)";

template <class F> F Entry(const char* name)
{
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion(name, &f, CUDART_VERSION, cudaEnableDefault, &status) !=
            cudaSuccess ||
        !f)
    {
        std::fprintf(stderr, "no driver entry point %s\n", name);
        return nullptr;
    }
    return reinterpret_cast<F>(f);
}

} // namespace

int main()
{
    auto loadData = Entry<decltype(&cuModuleLoadData)>("cuModuleLoadData");
    auto getFunction = Entry<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
    auto getAttribute = Entry<decltype(&cuFuncGetAttribute)>("cuFuncGetAttribute");
    auto setAttribute = Entry<decltype(&cuFuncSetAttribute)>("cuFuncSetAttribute");
    auto launch = Entry<decltype(&cuLaunchKernel)>("cuLaunchKernel");
    auto launchEx = Entry<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");
    auto unload = Entry<decltype(&cuModuleUnload)>("cuModuleUnload");
    if (!loadData || !getFunction || !getAttribute || !setAttribute || !launch || !launchEx ||
        !unload)
    {
        return 1;
    }
    CUmodule module = nullptr;
    CUfunction scale = nullptr;
    CUfunction missing = nullptr;
    std::printf("load %d\n", loadData(&module, kPtx));
    std::printf("get driver_scale %d\n", getFunction(&scale, module, "driver_scale"));
    std::printf("get driver_sca %d\n", getFunction(&missing, module, "driver_sca"));
    int threads = 0;
    int shared = 0;
    getAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, scale);
    setAttribute(scale, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000);
    getAttribute(&shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, scale);
    std::printf("max threads %d, dynamic shared %d\n", threads, shared);

    float* x = nullptr;
    int n = 512;
    cudaMalloc(reinterpret_cast<void**>(&x), n * sizeof(float));
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    void* args[] = {&x, &n};
    cudaEventRecord(start, stream);
    int rc =
        launch(scale, 4, 1, 1, 128, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr);
    rc |= launch(scale, 4, 1, 1, 128, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr);
    CUlaunchConfig config{};
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.gridDimX = 4;
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = reinterpret_cast<CUstream>(stream);
    rc |= launchEx(&config, scale, args, nullptr);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    std::printf("launches %d took %.3f us\n", rc, ms * 1000.0f);
    const int first = unload(module);
    const int second = unload(module);
    std::printf("unload %d, unload again %d\n", first, second);
    std::printf("launch after unload %d\n",
                launch(scale, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
    cudaFree(x);
    return 0;
}
