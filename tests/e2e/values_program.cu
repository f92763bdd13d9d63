// Small buffers carry their real bytes: a per-rank value copied to the device goes
// through all-gather, all-reduce, broadcast, reduce-scatter, send/recv and
// device-to-device copies, and what each rank reads back is printed.  A large all-reduce
// reads zeros, and so do bytes a kernel wrote through an output pointer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>
#include <vector>

namespace
{

template <class T> std::string Join(const std::vector<T>& v)
{
    std::string s;
    for (const T& x : v)
    {
        s += (s.empty() ? "" : " ") + std::to_string(x);
    }
    return s;
}

/// What a reduction leaves in a one-element output: a count that only the kernel knows.
__global__ void StoreCount(int32_t* out, int32_t count)
{
    *out = count;
}

/// An input the kernel only reads (const) and an output it writes.
__global__ void SumInto(const int32_t* in, int32_t n, int32_t* out)
{
    int32_t sum = 0;
    for (int32_t i = 0; i < n; ++i)
    {
        sum += in[i];
    }
    out[0] = sum;
    out[1] = sum;
}

} // namespace

int main()
{
    const int rank = std::atoi(std::getenv("RANK"));
    const int world = std::atoi(std::getenv("WORLD_SIZE"));
    cudaSetDevice(std::atoi(std::getenv("LOCAL_RANK")));
    ncclUniqueId id{};
    const std::string tag = std::string("values-") + std::getenv("PHANTORA_TOKEN");
    std::memcpy(id.internal, tag.c_str(), std::min(tag.size(), sizeof id.internal));
    ncclComm_t comm = nullptr;
    if (ncclCommInitRank(&comm, world, id, rank) != ncclSuccess)
    {
        return 1;
    }
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);

    // all-gather of two int64 per rank, read back through a device-to-device copy
    const std::vector<int64_t> mine = {10 * (rank + 1), -(rank + 1)};
    int64_t *send = nullptr, *gathered = nullptr, *copy = nullptr;
    cudaMalloc(&send, 2 * sizeof(int64_t));
    cudaMalloc(&gathered, 2 * world * sizeof(int64_t));
    cudaMalloc(&copy, 2 * world * sizeof(int64_t));
    cudaMemcpyAsync(send, mine.data(), 2 * sizeof(int64_t), cudaMemcpyHostToDevice, s);
    ncclAllGather(send, gathered, 2, ncclInt64, comm, s);
    cudaMemcpyAsync(copy, gathered, 2 * world * sizeof(int64_t), cudaMemcpyDeviceToDevice, s);
    std::vector<int64_t> all(2 * world);
    cudaMemcpyAsync(all.data(), copy, all.size() * sizeof(int64_t), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: all-gather %s\n", rank, Join(all).c_str());

    // in-place all-reduces of int32: sum and max
    int32_t* v = nullptr;
    cudaMalloc(&v, 3 * sizeof(int32_t));
    const std::vector<int32_t> three = {rank, rank * rank, 1};
    cudaMemcpy(v, three.data(), 3 * sizeof(int32_t), cudaMemcpyHostToDevice);
    ncclAllReduce(v, v, 3, ncclInt32, ncclSum, comm, s);
    std::vector<int32_t> sum(3);
    cudaMemcpy(sum.data(), v, 3 * sizeof(int32_t), cudaMemcpyDeviceToHost);
    ncclAllReduce(v, v, 3, ncclInt32, ncclMax, comm, s); // every rank holds the sum already
    std::vector<int32_t> max(3);
    cudaMemcpy(max.data(), v, 3 * sizeof(int32_t), cudaMemcpyDeviceToHost);
    std::printf("rank %d: all-reduce sum %s max %s\n", rank, Join(sum).c_str(), Join(max).c_str());

    // broadcast from rank 1 of a memset buffer
    uint8_t* b = nullptr;
    cudaMalloc(&b, 4);
    cudaMemsetAsync(b, 0x10 + rank, 4, s);
    ncclBroadcast(b, b, 4, ncclUint8, 1, comm, s);
    uint8_t got[4] = {};
    cudaMemcpyAsync(got, b, 4, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: broadcast %d %d %d %d\n", rank, got[0], got[1], got[2], got[3]);

    // reduce-scatter of floats: element i of rank r is r + i
    float *rsIn = nullptr, *rsOut = nullptr;
    cudaMalloc(&rsIn, world * sizeof(float));
    cudaMalloc(&rsOut, sizeof(float));
    std::vector<float> in(world);
    for (int i = 0; i < world; ++i)
    {
        in[i] = static_cast<float>(rank + i) + 0.5f;
    }
    cudaMemcpyAsync(rsIn, in.data(), world * sizeof(float), cudaMemcpyHostToDevice, s);
    ncclReduceScatter(rsIn, rsOut, 1, ncclFloat32, ncclSum, comm, s);
    float out = -1;
    cudaMemcpyAsync(&out, rsOut, sizeof(float), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: reduce-scatter %g\n", rank, out);

    // a buffer only partly written from the host carries no values either: its
    // all-gather's result reads as zeros, and the known half reads back as written
    int32_t* partly = nullptr;
    int32_t* partlyAll = nullptr;
    cudaMalloc(&partly, 2 * sizeof(int32_t));
    cudaMalloc(&partlyAll, 2 * world * sizeof(int32_t));
    const int32_t known = 7 + rank;
    cudaMemcpy(partly + 1, &known, sizeof known, cudaMemcpyHostToDevice);
    ncclAllGather(partly, partlyAll, 2, ncclInt32, comm, s);
    std::vector<int32_t> partlyGot(2 * world, -1);
    cudaMemcpy(partlyGot.data(), partlyAll, partlyGot.size() * sizeof(int32_t),
               cudaMemcpyDeviceToHost);
    int32_t mineBack[2] = {-1, -1};
    cudaMemcpy(mineBack, partly, sizeof mineBack, cudaMemcpyDeviceToHost);
    std::printf("rank %d: partly known all-gather %s; own %d %d\n", rank, Join(partlyGot).c_str(),
                mineBack[0], mineBack[1]);

    // freed memory forgets its bytes: an allocation at the same address reads zeros
    int32_t* freed = nullptr;
    cudaMalloc(&freed, sizeof(int32_t));
    const int32_t before = 99;
    cudaMemcpy(freed, &before, sizeof before, cudaMemcpyHostToDevice);
    cudaFree(freed);
    int32_t* again = nullptr;
    cudaMalloc(&again, sizeof(int32_t));
    int32_t after = -1;
    cudaMemcpy(&after, again, sizeof after, cudaMemcpyDeviceToHost);
    std::printf("rank %d: reallocated %s reads %d\n", rank, again == freed ? "same" : "other",
                after);

    // memory handed out again without cudaFree (a caching allocator's block) keeps no
    // bytes of the tensor it held before once a kernel writes there: what a kernel's
    // output pointer points to reads as zeros from that address on, the bytes before it
    // (a live neighbour) still read as written, and so does what a kernel only reads
    int32_t* pool = nullptr;
    cudaMalloc(&pool, 8 * sizeof(int32_t));
    const int32_t earlier[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cudaMemcpy(pool, earlier, sizeof earlier, cudaMemcpyHostToDevice);
    StoreCount<<<1, 1, 0, s>>>(pool + 2, 5);
    int32_t pooled[8] = {};
    cudaMemcpyAsync(pooled, pool, sizeof pooled, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: kernel-written reads %s\n", rank,
                Join(std::vector<int32_t>(pooled, pooled + 8)).c_str());
    int32_t *in2 = nullptr, *out2 = nullptr;
    cudaMalloc(&in2, 2 * sizeof(int32_t));
    cudaMalloc(&out2, 2 * sizeof(int32_t));
    cudaMemcpy(in2, earlier, 2 * sizeof(int32_t), cudaMemcpyHostToDevice);
    cudaMemcpy(out2, earlier + 2, 2 * sizeof(int32_t), cudaMemcpyHostToDevice);
    SumInto<<<1, 1, 0, s>>>(in2, 2, out2);
    int32_t both[4] = {-1, -1, -1, -1};
    cudaMemcpyAsync(both, in2, 2 * sizeof(int32_t), cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(both + 2, out2, 2 * sizeof(int32_t), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: kernel input and output read %s\n", rank,
                Join(std::vector<int32_t>(both, both + 4)).c_str());

    // send/recv carry small values too: a ring in one group (each rank sends to the next
    // and receives from the one before), then, as PyTorch's send_object_list does, rank 0
    // sends rank 1 a size and then that many bytes, each in a lone ncclSend; rank 1 reads
    // the size before it posts the second receive
    int64_t *ringSend = nullptr, *ringRecv = nullptr;
    cudaMalloc(&ringSend, 2 * sizeof(int64_t));
    cudaMalloc(&ringRecv, 2 * sizeof(int64_t));
    const int64_t ringMine[2] = {100 + rank, rank * rank};
    cudaMemcpyAsync(ringSend, ringMine, sizeof ringMine, cudaMemcpyHostToDevice, s);
    ncclGroupStart();
    ncclSend(ringSend, 2, ncclInt64, (rank + 1) % world, comm, s);
    ncclRecv(ringRecv, 2, ncclInt64, (rank + world - 1) % world, comm, s);
    ncclGroupEnd();
    int64_t ringGot[2] = {-1, -1};
    cudaMemcpyAsync(ringGot, ringRecv, sizeof ringGot, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    std::printf("rank %d: ring recv %lld %lld\n", rank, static_cast<long long>(ringGot[0]),
                static_cast<long long>(ringGot[1]));
    if (rank < 2)
    {
        const char payload[] = "pickled shapes";
        int64_t* size = nullptr;
        char* bytes = nullptr;
        cudaMalloc(&size, sizeof(int64_t));
        cudaMalloc(&bytes, 64);
        if (rank == 0)
        {
            const int64_t n = sizeof payload;
            cudaMemcpy(size, &n, sizeof n, cudaMemcpyHostToDevice);
            cudaMemcpy(bytes, payload, sizeof payload, cudaMemcpyHostToDevice);
            ncclSend(size, 1, ncclInt64, 1, comm, s);
            ncclSend(bytes, sizeof payload, ncclUint8, 1, comm, s);
            cudaStreamSynchronize(s);
        }
        else
        {
            ncclRecv(size, 1, ncclInt64, 0, comm, s);
            int64_t n = 0;
            cudaMemcpy(&n, size, sizeof n, cudaMemcpyDeviceToHost);
            char got[64] = {};
            if (n > 0 && n <= 64)
            {
                ncclRecv(bytes, static_cast<size_t>(n), ncclUint8, 0, comm, s);
                cudaMemcpy(got, bytes, static_cast<size_t>(n), cudaMemcpyDeviceToHost);
            }
            std::printf("rank 1: object of %lld bytes: %s\n", static_cast<long long>(n), got);
        }
    }

    // a large all-reduce carries no values: its result reads as zeros
    const size_t big = 1 << 20;
    float* large = nullptr;
    cudaMalloc(&large, big * sizeof(float));
    std::vector<float> ones(big, 1.0f);
    cudaMemcpy(large, ones.data(), big * sizeof(float), cudaMemcpyHostToDevice);
    ncclAllReduce(large, large, big, ncclFloat32, ncclSum, comm, s);
    float first = -1;
    cudaMemcpy(&first, large, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("rank %d: large all-reduce reads %g\n", rank, first);

    ncclCommDestroy(comm);
    return 0;
}
