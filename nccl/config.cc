#include "config.h"

namespace phantora::nccl
{

const char* AlgorithmName(Algorithm algo)
{
    switch (algo)
    {
    case Algorithm::Ring:
        return "ring";
    case Algorithm::Tree:
        return "tree";
    case Algorithm::Nvls:
        return "nvls";
    case Algorithm::NvlsTree:
        return "nvlstree";
    }
    return "ring";
}

const char* ProtocolName(Protocol proto)
{
    return proto == Protocol::LL ? "ll" : (proto == Protocol::LL128 ? "ll128" : "simple");
}

uint64_t WireBytes(Protocol proto, uint64_t dataBytes)
{
    switch (proto)
    {
    case Protocol::LL:
        return 2 * dataBytes; // 8 bytes of flag per 8 bytes of data
    case Protocol::LL128:
        return (dataBytes * 128 + 119) / 120; // 120 data bytes per 128-byte line
    case Protocol::Simple:
        return dataBytes;
    }
    return dataBytes;
}

} // namespace phantora::nccl
