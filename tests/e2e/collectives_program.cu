// Every NCCL collective once on one stream, each timed with CUDA events, so a test can
// compare what a running program sees with the NCCL model run alone.
//   collectives_program BYTES   (BYTES: nccl-tests' size convention for every op)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>

namespace
{

int Check(ncclResult_t r, const char* what)
{
    if (r != ncclSuccess)
    {
        std::fprintf(stderr, "%s failed: %s\n", what, ncclGetErrorString(r));
        std::exit(1);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (64u << 20);
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK")));
    ncclUniqueId id{};
    const std::string tag = std::string("coll-") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    ncclComm_t comm = nullptr;
    Check(ncclCommInitRank(&comm, world, id, rank), "ncclCommInitRank");

    const size_t floats = bytes / sizeof(float);
    const size_t perRank = floats / static_cast<size_t>(world);
    float* in = nullptr;
    float* out = nullptr;
    cudaMalloc(&in, bytes);
    cudaMalloc(&out, bytes);
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);

    auto timed = [&](const char* name, auto&& call)
    {
        // The first call also pays the dynamic linker's symbol lookup in host time: time
        // the second.
        float ms = 0;
        for (int round = 0; round < 2; ++round)
        {
            // Line the ranks up first so each collective starts as it would alone.
            Check(ncclAllReduce(in, in, 1, ncclFloat, ncclSum, comm, s), "barrier all-reduce");
            cudaStreamSynchronize(s);
            cudaEventRecord(start, s);
            Check(call(), name);
            cudaEventRecord(stop, s);
            cudaEventSynchronize(stop);
            cudaEventElapsedTime(&ms, start, stop);
        }
        std::printf("rank %d op %s time %.3f us\n", rank, name, ms * 1e3);
    };
    timed("all_reduce",
          [&] { return ncclAllReduce(in, out, floats, ncclFloat, ncclSum, comm, s); });
    timed("all_gather", [&] { return ncclAllGather(in, out, perRank, ncclFloat, comm, s); });
    timed("reduce_scatter",
          [&] { return ncclReduceScatter(in, out, perRank, ncclFloat, ncclSum, comm, s); });
    timed("broadcast",
          [&] { return ncclBroadcast(in, out, floats, ncclFloat, 1 % world, comm, s); });
    timed("reduce",
          [&] { return ncclReduce(in, out, floats, ncclFloat, ncclSum, world - 1, comm, s); });
    timed("all_to_all", [&] { return ncclAlltoAll(in, out, perRank, ncclFloat, comm, s); });

    // A single-process communicator: one member, this GPU.
    ncclComm_t solo = nullptr;
    Check(ncclCommInitAll(&solo, 1, nullptr), "ncclCommInitAll");
    int soloCount = 0;
    ncclCommCount(solo, &soloCount);
    Check(ncclAllReduce(in, out, floats, ncclFloat, ncclSum, solo, s), "solo all-reduce");
    cudaStreamSynchronize(s);
    std::printf("rank %d solo communicator of %d\n", rank, soloCount);
    ncclCommDestroy(solo);
    if (argc > 2 && std::string(argv[2]) == "init-all-2")
    {
        ncclComm_t two[2];
        ncclCommInitAll(two, 2, nullptr);
        std::printf("rank %d init-all-2 returned\n", rank);
    }

    // A root outside the communicator is the caller's error, as in NCCL.
    const ncclResult_t bad = ncclBroadcast(in, out, floats, ncclFloat, world, comm, s);
    std::printf("rank %d bad root %s\n", rank, bad == ncclInvalidArgument ? "refused" : "accepted");
    ncclCommDestroy(comm);
    return 0;
}
