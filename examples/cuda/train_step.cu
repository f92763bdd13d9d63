// A small data-parallel "training step" in plain CUDA C++ and NCCL: every rank
// runs one kernel over its buffer (the "compute"), all-reduces the buffer (the
// "gradient exchange") and synchronises.  It prints the step time measured with
// clock_gettime(CLOCK_MONOTONIC), exactly as a real program would: under
// phantora-cluster that clock is the simulated one.
//
// Ranks find each other as torchrun-launched programs do: RANK, WORLD_SIZE and
// LOCAL_RANK in the environment.  Rank 0 publishes the NCCL unique id through a
// file (PHANTORA_EXAMPLE_ID_FILE, default /tmp/phantora-example-<user>-<MASTER_PORT>.ncclid).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>
#include <thread>
#include <unistd.h>

#define CHECK_CUDA(call)                                                                           \
    do                                                                                             \
    {                                                                                              \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
        {                                                                                          \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                      \
                         cudaGetErrorString(e_));                                                  \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_NCCL(call)                                                                           \
    do                                                                                             \
    {                                                                                              \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess)                                                                     \
        {                                                                                          \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                      \
                         ncclGetErrorString(r_));                                                  \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__global__ void phantora_step_kernel(float* data, size_t n, float scale)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    {
        data[i] = data[i] * scale + 1.0f;
    }
}

namespace
{

int envInt(const char* name, int fallback)
{
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : fallback;
}

double nowSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One file per run: the launcher's rendezvous port tells runs apart (phantora-cluster and
// torchrun both set it), so a run never reads the id another run, or an earlier one, left.
std::string idFilePath()
{
    if (const char* p = std::getenv("PHANTORA_EXAMPLE_ID_FILE"))
    {
        return p;
    }
    const char* port = std::getenv("MASTER_PORT");
    return "/tmp/phantora-example-" + std::to_string(getuid()) +
           (port ? std::string("-") + port : "") + ".ncclid";
}

bool readUniqueId(const std::string& path, ncclUniqueId& id)
{
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
    {
        return false;
    }
    const bool ok = std::fread(&id, sizeof id, 1, f) == 1;
    std::fclose(f);
    return ok;
}

// Rank 0 writes the id atomically (write then rename); the others wait for it.  An id
// already in PHANTORA_EXAMPLE_ID_PRESET's file is used by every rank as it is: nobody
// polls, so the run does not depend on which rank the host started first.
ncclUniqueId shareUniqueId(int rank)
{
    ncclUniqueId id{};
    if (const char* preset = std::getenv("PHANTORA_EXAMPLE_ID_PRESET"))
    {
        if (!readUniqueId(preset, id))
        {
            std::fprintf(stderr, "rank %d: no NCCL id in %s\n", rank, preset);
            std::exit(1);
        }
        return id;
    }
    const std::string path = idFilePath();
    if (rank == 0)
    {
        CHECK_NCCL(ncclGetUniqueId(&id));
        const std::string tmp = path + ".tmp." + std::to_string(getpid());
        FILE* f = std::fopen(tmp.c_str(), "wb");
        if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0 ||
            std::rename(tmp.c_str(), path.c_str()) != 0)
        {
            std::fprintf(stderr, "rank 0: cannot write %s: %s\n", path.c_str(),
                         std::strerror(errno));
            std::exit(1);
        }
        // Every rank has read it once the communicator exists, long before rank 0 exits.
        static const std::string written = path;
        std::atexit([] { std::remove(written.c_str()); });
        return id;
    }
    for (int attempt = 0; attempt < 6000; ++attempt)
    {
        if (readUniqueId(path, id))
        {
            return id;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::fprintf(stderr, "rank %d: no NCCL id in %s after 60 s\n", rank, path.c_str());
    std::exit(1);
}

} // namespace

int main(int argc, char** argv)
{
    const int rank = envInt("RANK", 0);
    const int world = envInt("WORLD_SIZE", 1);
    const int localRank = envInt("LOCAL_RANK", 0);
    const size_t elems = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t{1} << 24);
    const int steps = argc > 2 ? std::atoi(argv[2]) : 3;

    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    if (localRank >= devices)
    {
        std::fprintf(stderr, "rank %d: LOCAL_RANK %d but only %d devices\n", rank, localRank,
                     devices);
        return 1;
    }
    CHECK_CUDA(cudaSetDevice(localRank));

    float* buf = nullptr;
    CHECK_CUDA(cudaMalloc(&buf, elems * sizeof(float)));
    CHECK_CUDA(cudaMemset(buf, 0, elems * sizeof(float)));

    ncclUniqueId id = shareUniqueId(rank);
    ncclComm_t comm = nullptr;
    CHECK_NCCL(ncclCommInitRank(&comm, world, id, rank));
    if (rank == 0)
    {
        // Init has joined every rank: nobody reads the file any more.
        std::remove(idFilePath().c_str());
    }

    cudaStream_t stream = nullptr;
    CHECK_CUDA(cudaStreamCreate(&stream));
    for (int step = 0; step < steps; ++step)
    {
        const double t0 = nowSeconds();
        phantora_step_kernel<<<1024, 256, 0, stream>>>(buf, elems, 0.5f);
        CHECK_CUDA(cudaGetLastError());
        CHECK_NCCL(ncclAllReduce(buf, buf, elems, ncclFloat, ncclSum, comm, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        const double t1 = nowSeconds();
        std::printf("rank %d step %d time %.3f us\n", rank, step, (t1 - t0) * 1e6);
        std::fflush(stdout);
    }

    float first = -1.0f;
    CHECK_CUDA(cudaMemcpy(&first, buf, sizeof first, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_CUDA(cudaFree(buf));
    if (rank == 0)
    {
        std::printf("done: %d ranks, %zu floats, %d steps\n", world, elems, steps);
    }
    return 0;
}
