// What a kernel's launch passes it, and which of those values join the kernel's key in
// the profile.  The simulator (interposer) and the recorder (a real GPU) both read the
// parameter layout from the fat binary the program registered, so the two sides compute
// the same facts from the same launch.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace phantora::kernel_args
{

struct KernelParam
{
    uint32_t offset{0}; ///< in the parameter buffer
    uint32_t size{0};   ///< bytes; 0 for an ordinal the cubin does not describe
    bool operator==(const KernelParam&) const = default;
};
using ParamLayout = std::vector<KernelParam>; ///< by ordinal, as the launch's args[]

/// Every kernel's parameters in one cubin, by mangled name: the EIATTR_KPARAM_INFO
/// records of its ".nv.info.<name>" section.
std::unordered_map<std::string, ParamLayout> ParamLayoutsOf(std::string_view cubin);

/// Every kernel's layout in a file's bytes: a cubin, a fat binary container, or a
/// library or program whose ".nv_fatbin" section holds containers.  The first cubin that
/// describes a kernel gives its layout (the layout does not depend on the architecture).
std::map<std::string, ParamLayout> ParamLayoutsInImage(std::string_view bytes);

/// The scalar arguments of one launch that can decide its cost, as "ordinal=value"
/// joined by ',': 4-byte values below 2^23 and 8-byte values below 2^32 (sizes, counts,
/// strides, enums).  Left out is everything that differs between two runs of one program
/// or between a real GPU and the simulator: pointers (at or above 2^32 on both), floats
/// and doubles (a positive normal float is 2^23 or more as bits), negative numbers,
/// 1-byte values (mostly empty functors and lambdas, whose one byte is never written:
/// PyTorch passes them to every elementwise kernel), 2-byte values (half-precision
/// scalars) and structs, which hold pointers and seeds among their sizes.
std::string ArgFacts(const ParamLayout& layout, void* const* args);

/// The parameter layouts of a program's kernels, found by what launches name a kernel
/// by (its host stub's address).  A fat binary is read when one of its kernels is first
/// looked up, one cubin at a time until the kernel is found: a library such as PyTorch
/// registers hundreds, of which a program launches from few.  Thread-safe.
class KernelParamIndex
{
public:
    /// \p fatbin: what __cudaRegisterFatBinary was given; \p mangled: the device name.
    void Add(const void* key, const void* fatbin, const char* mangled);
    /// A kernel loaded at run time (cuModuleLoadData: Triton, NVRTC) whose cubin gave its
    /// \p layout directly; \p mangled as the cubin names it.
    void AddLayout(const void* key, const char* mangled, ParamLayout layout);
    /// Null for a kernel not added, or whose fat binary holds no readable layout for it.
    const ParamLayout* Find(const void* key);
    /// ArgFacts of the launch; empty when the layout is unknown or \p args is null.
    std::string Facts(const void* key, void* const* args);
    /// kernel_work.h WorkFacts of a launch of \p blocks blocks; empty where they say nothing.
    std::string Work(const void* key, void* const* args, uint32_t blocks);

private:
    struct Container
    {
        std::vector<std::string_view> entries; ///< cubin entries not read yet, last first
        std::unordered_map<std::string, ParamLayout> layouts;
    };
    struct Kernel
    {
        const char* container{nullptr};
        std::string mangled;
        bool looked{false};
        const ParamLayout* layout{nullptr};
    };
    const ParamLayout* Resolve(Kernel& k);

    std::mutex m_mutex;
    std::unordered_map<const void*, Kernel> m_kernels;
    /// AddLayout's layouts (an unordered_map's values stay where they are).
    std::unordered_map<const void*, ParamLayout> m_given;
    std::map<const char*, Container> m_containers;
};

} // namespace phantora::kernel_args
