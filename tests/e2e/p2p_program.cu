// NCCL point-to-point as programs use it.  Modes:
//   pipeline   each rank receives from its predecessor, computes, sends to its
//              successor (pipeline parallelism), and reports when it finished;
//   alltoall   an all-to-all written as grouped sends/receives, then ncclAlltoAll on
//              the same bytes, each timed with events;
//   groupcoll  two all-reduces inside one group, then a synchronisation;
//   mismatch   rank 1 receives more bytes than rank 0 sends;
//   unmatched  rank 0 sends, rank 1 never receives.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>

__global__ void p2p_stage(float* x)
{
    x[threadIdx.x] += 1.0f;
}

namespace
{

void Check(bool ok, const char* what)
{
    if (!ok)
    {
        std::fprintf(stderr, "failed: %s\n", what);
        std::exit(1);
    }
}

double NowUs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

float ElapsedUs(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, a, b) == cudaSuccess, "elapsed");
    return ms * 1000.0f;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string mode = argc > 1 ? argv[1] : "pipeline";
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK")));
    ncclUniqueId id{};
    const std::string tag = std::string("p2p-") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    ncclComm_t comm = nullptr;
    Check(ncclCommInitRank(&comm, world, id, rank) == ncclSuccess, "comm init");
    const size_t bytes = size_t{8} << 20;
    float* buf = nullptr;
    float* out = nullptr;
    Check(cudaMalloc(&buf, bytes) == cudaSuccess && cudaMalloc(&out, bytes) == cudaSuccess,
          "malloc");
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    const size_t floats = bytes / 4;
    const double t0 = NowUs();

    if (mode == "pipeline")
    {
        // two micro-batches flow down the chain of ranks
        for (int mb = 0; mb < 2; ++mb)
        {
            if (rank > 0)
            {
                Check(ncclRecv(buf, floats, ncclFloat, rank - 1, comm, s) == ncclSuccess, "recv");
            }
            p2p_stage<<<1, 32, 0, s>>>(buf);
            if (rank + 1 < world)
            {
                Check(ncclSend(buf, floats, ncclFloat, rank + 1, comm, s) == ncclSuccess, "send");
            }
        }
        Check(cudaStreamSynchronize(s) == cudaSuccess, "sync");
        std::printf("rank %d pipeline done at %.3f us\n", rank, NowUs() - t0);
    }
    else if (mode == "alltoall")
    {
        cudaEvent_t e[4];
        for (auto& ev : e)
        {
            cudaEventCreate(&ev);
        }
        const size_t share = floats / static_cast<size_t>(world);
        cudaEventRecord(e[0], s);
        ncclGroupStart();
        for (int peer = 0; peer < world; ++peer)
        {
            ncclSend(buf + share * static_cast<size_t>(peer), share, ncclFloat, peer, comm, s);
            ncclRecv(out + share * static_cast<size_t>(peer), share, ncclFloat, peer, comm, s);
        }
        Check(ncclGroupEnd() == ncclSuccess, "group end");
        cudaEventRecord(e[1], s);
        cudaEventRecord(e[2], s);
        Check(ncclAlltoAll(buf, out, share, ncclFloat, comm, s) == ncclSuccess, "alltoall");
        cudaEventRecord(e[3], s);
        Check(cudaStreamSynchronize(s) == cudaSuccess, "sync");
        std::printf("rank %d grouped send/recv %.3f us, ncclAlltoAll %.3f us\n", rank,
                    ElapsedUs(e[0], e[1]), ElapsedUs(e[2], e[3]));
    }
    else if (mode == "groupcoll")
    {
        ncclGroupStart();
        ncclAllReduce(buf, buf, floats, ncclFloat, ncclSum, comm, s);
        ncclAllReduce(out, out, floats / 2, ncclFloat, ncclSum, comm, s);
        Check(ncclGroupEnd() == ncclSuccess, "group end");
        Check(cudaStreamSynchronize(s) == cudaSuccess, "sync");
        std::printf("rank %d grouped collectives done at %.3f us\n", rank, NowUs() - t0);
    }
    else if (mode == "mismatch" || mode == "unmatched")
    {
        if (rank == 0)
        {
            ncclSend(buf, floats, ncclFloat, 1, comm, s);
        }
        else if (rank == 1 && mode == "mismatch")
        {
            ncclRecv(buf, floats * 2, ncclFloat, 0, comm, s);
        }
        cudaStreamSynchronize(s);
        std::printf("rank %d finished\n", rank);
    }
    ncclCommDestroy(comm);
    return 0;
}
