// A library call the simulator times as one op (a cuBLAS GEMM, a cuDNN execute): while
// it runs, every GPU activity it launches is tagged (CUPTI external correlation, kind
// CUSTOM0) with the call's signature, named exactly as the simulation's interposer names
// it, so the raw log stores the call's span under that name, not its kernels.
#pragma once

#include <cstdint>
#include <string>

namespace phantora::recorder
{

class LibraryCallScope
{
public:
    /// Only the outermost call on a thread tags: cuBLAS calls cuBLASLt inside, cuDNN may
    /// call cuBLAS.
    explicit LibraryCallScope(const std::string& name);
    ~LibraryCallScope();
    LibraryCallScope(const LibraryCallScope&) = delete;
    LibraryCallScope& operator=(const LibraryCallScope&) = delete;

private:
    bool m_outer;
    uint64_t m_id{0};
};

} // namespace phantora::recorder
