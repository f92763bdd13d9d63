#include "op_key.h"

#include <fmt/format.h>

namespace phantora::profile
{

namespace
{
constexpr const char* kKindNames[kOpKinds] = {"kernel", "gemm", "memcpy", "memset", "cudnn"};
}

const char* OpKindName(OpKind kind)
{
    return kKindNames[static_cast<int>(kind)];
}

std::optional<OpKind> ParseOpKind(std::string_view text)
{
    for (int i = 0; i < kOpKinds; ++i)
    {
        if (text == kKindNames[i])
        {
            return static_cast<OpKind>(i);
        }
    }
    return std::nullopt;
}

double OpKey::Threads() const
{
    double t = 1.0;
    for (int i = 0; i < 3; ++i)
    {
        t *= static_cast<double>(grid[i]) * static_cast<double>(block[i]);
    }
    return t;
}

std::string OpKey::Describe() const
{
    switch (kind)
    {
    case OpKind::Kernel:
        return fmt::format("{} grid=({},{},{}) block=({},{},{}) smem={}", name, grid[0], grid[1],
                           grid[2], block[0], block[1], block[2], sharedMem);
    case OpKind::Gemm:
    case OpKind::Cudnn:
        return name;
    case OpKind::Memcpy:
        return fmt::format("memcpy {} {} B", name, bytes);
    case OpKind::Memset:
        return fmt::format("memset {} B", bytes);
    }
    return name;
}

OpKey KeyForLaunch(std::string_view name, const std::array<uint32_t, 3>& grid,
                   const std::array<uint32_t, 3>& block, uint32_t sharedMem)
{
    OpKey k;
    k.name = std::string(name);
    if (name.starts_with("cublas") && name.find("(m=") != std::string_view::npos)
    {
        // cuBLAS picks its own kernels and launch shapes: the signature is the key.
        k.kind = OpKind::Gemm;
        return k;
    }
    if (name.starts_with("cudnn") && name.find('(') != std::string_view::npos)
    {
        // cuDNN picks its own kernels too: its call's signature is the key.
        k.kind = OpKind::Cudnn;
        return k;
    }
    k.kind = OpKind::Kernel;
    k.grid = grid;
    k.block = block;
    k.sharedMem = sharedMem;
    return k;
}

OpKey KeyForCopy(std::string_view direction, uint64_t bytes)
{
    OpKey k;
    k.kind = direction == "memset" ? OpKind::Memset : OpKind::Memcpy;
    k.name = std::string(direction);
    k.bytes = bytes;
    return k;
}

} // namespace phantora::profile
