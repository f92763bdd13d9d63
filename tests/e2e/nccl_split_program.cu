// Splits the world by rank parity, all-reduces on the new communicator and reports
// what the communicators say about themselves.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>

int main()
{
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK")));
    ncclUniqueId id{};
    const std::string tag = std::string("split-") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    ncclComm_t all = nullptr;
    if (ncclCommInitRank(&all, world, id, rank) != ncclSuccess)
    {
        return 1;
    }
    // the last rank opts out
    const int color = rank == world - 1 ? NCCL_SPLIT_NOCOLOR : rank % 2;
    ncclComm_t half = nullptr;
    if (ncclCommSplit(all, color, -rank, &half, nullptr) != ncclSuccess)
    {
        return 1;
    }
    if (!half)
    {
        std::printf("rank %d: no communicator\n", rank);
        return 0;
    }
    int count = 0;
    int myRank = 0;
    ncclCommCount(half, &count);
    ncclCommUserRank(half, &myRank);
    float* buf = nullptr;
    cudaMalloc(&buf, 1 << 20);
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    ncclGroupStart();
    ncclAllReduce(buf, buf, (1 << 20) / 4, ncclFloat, ncclSum, half, s);
    ncclGroupEnd();
    cudaStreamSynchronize(s);
    ncclResult_t async = ncclInternalError;
    ncclCommGetAsyncError(half, &async);
    std::printf("rank %d: color %d, %d ranks, rank %d in it, async %d\n", rank, color, count,
                myRank, static_cast<int>(async));
    ncclCommDestroy(half);
    ncclCommDestroy(all);
    return 0;
}
