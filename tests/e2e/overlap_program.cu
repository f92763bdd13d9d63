// Compute/communication overlap as frameworks do it: kernel A on the compute
// stream, then the all-reduce of A's output on a communication stream (ordered by
// an event) while kernel B runs on the compute stream; kernel C waits for both.
// Prints the span from a start event to an end event on the compute stream, read
// with cudaEventElapsedTime.  "serial" puts everything on one stream instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>

__global__ void overlap_a(float*) {}
__global__ void overlap_b(float*) {}
__global__ void overlap_c(float*) {}

#define CHECK(x)                                                                                   \
    do                                                                                             \
    {                                                                                              \
        if ((x) != 0)                                                                              \
        {                                                                                          \
            std::fprintf(stderr, "%s failed\n", #x);                                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char** argv)
{
    const bool serial = argc > 1 && std::strcmp(argv[1], "serial") == 0;
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    const size_t elems = 1 << 20;
    CHECK(cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK"))));
    float* buf = nullptr;
    CHECK(cudaMalloc(&buf, elems * sizeof(float)));

    // Every rank derives the same id from the launcher's port: no file exchange needed.
    ncclUniqueId id{};
    const std::string tag =
        std::string("overlap-") + std::getenv("MASTER_PORT") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    ncclComm_t comm = nullptr;
    CHECK(ncclCommInitRank(&comm, world, id, rank));

    cudaStream_t compute = nullptr;
    cudaStream_t comms = nullptr;
    CHECK(cudaStreamCreate(&compute));
    CHECK(cudaStreamCreate(&comms));
    if (serial)
    {
        comms = compute;
    }
    cudaEvent_t start, aDone, arDone, end;
    for (cudaEvent_t* e : {&start, &aDone, &arDone, &end})
    {
        CHECK(cudaEventCreate(e));
    }

    CHECK(cudaEventRecord(start, compute));
    overlap_a<<<1, 128, 0, compute>>>(buf);
    CHECK(cudaEventRecord(aDone, compute));
    CHECK(cudaStreamWaitEvent(comms, aDone, 0));
    CHECK(ncclAllReduce(buf, buf, elems, ncclFloat, ncclSum, comm, comms));
    CHECK(cudaEventRecord(arDone, comms));
    overlap_b<<<1, 128, 0, compute>>>(buf);
    CHECK(cudaStreamWaitEvent(compute, arDone, 0));
    overlap_c<<<1, 128, 0, compute>>>(buf);
    CHECK(cudaEventRecord(end, compute));

    const bool pendingBeforeSync = cudaEventQuery(end) == cudaErrorNotReady;
    CHECK(cudaEventSynchronize(end));
    const bool doneAfterSync = cudaEventQuery(end) == cudaSuccess;
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    std::printf("rank %d %s span %.3f us (query before sync: %s, after: %s)\n", rank,
                serial ? "serial" : "overlap", ms * 1000.0,
                pendingBeforeSync ? "not ready" : "ready", doneAfterSync ? "ready" : "not ready");
    CHECK(ncclCommDestroy(comm));
    return 0;
}
