#include "kernel_work.h"

#include <array>
#include <cstring>
#include <vector>

namespace phantora::kernel_args
{

namespace
{

enum class MetaKind : uint8_t
{
    TensorList,     ///< TensorListMetadata<depth>
    ScalarList,     ///< TensorListScalarListMetadata<scalar_t, depth>
    FusedOptimizer, ///< FusedOptimizerTensorListMetadata<depth>
};

/// ATen's DepthToMaxConfig: one set for 4 KiB kernel arguments, one for 32 KiB.
struct Config
{
    std::array<uint32_t, 5> maxTensors;
    std::array<uint32_t, 5> maxTensorsScalarList;
    uint32_t maxBlocks;
    uint32_t tensorIndexBytes; ///< block_to_tensor's element
};
constexpr std::array<Config, 2> kConfigs = {{
    {{110, 64, 48, 36, 30}, {96, 64, 48, 36, 30}, 320, 1},
    {{770, 448, 336, 252, 210}, {672, 448, 336, 252, 210}, 2240, 2},
}};
constexpr uint64_t kChunkSize = 65536;

struct Layout
{
    uint32_t tensors{0}; ///< numel_for_tensor's entries
    uint32_t numelAt{0}; ///< numel_for_tensor, int64 each
    uint32_t blockTensorAt{0};
    uint32_t indexBytes{1};
    uint32_t blockChunkAt{0}; ///< block_to_chunk, int each
    uint32_t maxBlocks{0};
    uint32_t size{0};
};

uint32_t AlignUp(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

/// The layout of \p kind at \p depth under \p c, with scalar_vals of \p scalarBytes.
std::optional<Layout> LayoutOf(MetaKind kind, uint32_t depth, const Config& c, uint32_t scalarBytes)
{
    if (depth < 1 || depth > 5)
        return std::nullopt;
    Layout l;
    l.tensors =
        kind == MetaKind::ScalarList ? c.maxTensorsScalarList[depth - 1] : c.maxTensors[depth - 1];
    if (kind == MetaKind::ScalarList && scalarBytes == 16 && depth <= 2)
    {
        // complex<double> lists of depth 1 and 2 hold fewer tensors (4 KiB: 72, 60)
        l.tensors = c.maxBlocks == 320 ? (depth == 1 ? 72 : 60) : (depth == 1 ? 504 : 420);
    }
    l.numelAt = depth * l.tensors * 8; // const void* addresses[depth][tensors]
    uint32_t at = l.numelAt + l.tensors * 8;
    if (kind == MetaKind::ScalarList)
    {
        at = AlignUp(at, scalarBytes > 8 ? 8 : scalarBytes) + l.tensors * scalarBytes;
    }
    else if (kind == MetaKind::FusedOptimizer)
    {
        at += c.maxTensorsScalarList[depth - 1] * 8; // state_steps_addresses
    }
    l.blockTensorAt = at;
    l.indexBytes = c.tensorIndexBytes;
    l.maxBlocks = c.maxBlocks;
    l.blockChunkAt = AlignUp(at + c.maxBlocks * c.tensorIndexBytes, 4);
    at = l.blockChunkAt + c.maxBlocks * 4;
    if (kind != MetaKind::ScalarList)
        at += 4; // start_tensor_this_launch
    l.size = AlignUp(at, 8);
    return l;
}

/// The metadata's kind and depth from the kernel's mangled name: the first template
/// argument of multi_tensor_apply_kernel, "18TensorListMetadataILi1E...",
/// "28TensorListScalarListMetadataIfLi3E...", "32FusedOptimizerTensorListMetadataILi4E...".
std::optional<std::pair<MetaKind, uint32_t>> KindOf(std::string_view mangled)
{
    if (mangled.find("multi_tensor_apply_kernel") == std::string_view::npos)
        return std::nullopt;
    struct Name
    {
        std::string_view text;
        MetaKind kind;
    };
    constexpr std::array<Name, 3> kNames = {{
        {"32FusedOptimizerTensorListMetadataI", MetaKind::FusedOptimizer},
        {"28TensorListScalarListMetadataI", MetaKind::ScalarList},
        {"18TensorListMetadataI", MetaKind::TensorList},
    }};
    for (const Name& n : kNames)
    {
        const std::size_t at = mangled.find(n.text);
        if (at == std::string_view::npos)
            continue;
        // the depth: the first "Li<digits>E" after the name
        const std::size_t li = mangled.find("Li", at + n.text.size());
        if (li == std::string_view::npos || li + 2 >= mangled.size())
            return std::nullopt;
        const char d = mangled[li + 2];
        if (d < '1' || d > '5' || li + 3 >= mangled.size() || mangled[li + 3] != 'E')
            return std::nullopt;
        return std::make_pair(n.kind, static_cast<uint32_t>(d - '0'));
    }
    return std::nullopt;
}

/// The size of the scalar_vals' type a TensorListScalarListMetadata's mangled name starts
/// with ("f", "N3c108BFloat16E", "N3c107complexIdEE"...); 0 if not one of these.
uint32_t ScalarBytes(std::string_view mangled)
{
    constexpr std::string_view kList = "28TensorListScalarListMetadataI";
    const std::size_t at = mangled.find(kList);
    if (at == std::string_view::npos)
        return 0;
    const std::string_view t = mangled.substr(at + kList.size());
    constexpr std::array<std::pair<std::string_view, uint32_t>, 8> kNamed = {{
        {"N3c107complexIdEE", 16},
        {"N3c107complexIfEE", 8},
        {"N3c107complexINS_4HalfEEE", 4},
        {"N3c104HalfE", 2},
        {"N3c108BFloat16E", 2},
        {"N3c1013Float8_e4m3fnE", 1},
        {"N3c1011Float8_e5m2E", 1},
        {"N3c107complexIN3c104HalfEEE", 4},
    }};
    for (const auto& [name, bytes] : kNamed)
    {
        if (t.substr(0, name.size()) == name)
            return bytes;
    }
    switch (t.empty() ? '\0' : t.front())
    {
    case 'a':
    case 'h':
    case 'c':
    case 'b':
        return 1;
    case 's':
    case 't':
        return 2;
    case 'f':
    case 'i':
    case 'j':
        return 4;
    case 'd':
    case 'l':
    case 'm':
    case 'x':
    case 'y':
        return 8;
    default:
        return 0;
    }
}

template <class T> T Read(std::string_view bytes, uint32_t at)
{
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}

/// The elements the launch's blocks process under \p l; nullopt if an entry is out of
/// range (the layout is not the one the program used).
std::optional<uint64_t> Elements(std::string_view meta, const Layout& l, uint32_t blocks)
{
    if (blocks == 0 || blocks > l.maxBlocks || meta.size() < l.size)
        return std::nullopt;
    uint64_t sum = 0;
    for (uint32_t b = 0; b < blocks; ++b)
    {
        const uint32_t t = l.indexBytes == 1 ? Read<uint8_t>(meta, l.blockTensorAt + b)
                                             : Read<uint16_t>(meta, l.blockTensorAt + 2 * b);
        const int32_t chunk = Read<int32_t>(meta, l.blockChunkAt + 4 * b);
        if (t >= l.tensors || chunk < 0)
            return std::nullopt;
        const int64_t numel = Read<int64_t>(meta, l.numelAt + 8 * t);
        const int64_t done = static_cast<int64_t>(chunk) * static_cast<int64_t>(kChunkSize);
        if (numel <= done)
            return std::nullopt;
        sum += static_cast<uint64_t>(std::min<int64_t>(numel - done, kChunkSize));
    }
    return sum;
}

} // namespace

std::optional<uint64_t> MultiTensorElements(std::string_view mangled, std::string_view metadata,
                                            uint32_t blocks)
{
    const auto kind = KindOf(mangled);
    if (!kind)
        return std::nullopt;
    // a scalar list's element from its name, else whichever size fits
    const uint32_t named = ScalarBytes(mangled);
    std::vector<Layout> fits;
    for (const Config& c : kConfigs)
    {
        for (const uint32_t scalar : {1u, 2u, 4u, 8u, 16u})
        {
            if (kind->first != MetaKind::ScalarList ? scalar != 4 : named && scalar != named)
                continue;
            const auto l = LayoutOf(kind->first, kind->second, c, scalar);
            if (l && l->size == metadata.size())
                fits.push_back(*l);
        }
    }
    if (fits.size() != 1)
        return std::nullopt; // none, or two the size cannot tell apart
    return Elements(metadata, fits.front(), blocks);
}

std::string InductorWork(const ParamLayout& layout, void* const* args)
{
    uint64_t pointers = 0, elements = 1;
    bool scalars = false;
    for (std::size_t i = 0; i < layout.size(); ++i)
    {
        if (layout[i].size == sizeof(uint64_t) && !scalars)
        {
            ++pointers; // Inductor's buffers come first; Triton's scratch pointers follow the sizes
        }
        else if (layout[i].size == sizeof(int32_t) && args[i])
        {
            int32_t v = 0;
            std::memcpy(&v, args[i], sizeof v);
            if (v <= 0)
            {
                return {};
            }
            elements *= static_cast<uint64_t>(v);
            scalars = true;
        }
    }
    if (!scalars || pointers == 0 || elements > (uint64_t{1} << 40))
    {
        return {};
    }
    return "elements=" + std::to_string(elements) + ",pointers=" + std::to_string(pointers);
}

std::string WorkFacts(std::string_view mangled, const ParamLayout& layout, void* const* args,
                      uint32_t blocks)
{
    if (args && (mangled.rfind("triton_poi_", 0) == 0 || mangled.rfind("triton_per_", 0) == 0 ||
                 mangled.rfind("triton_red_", 0) == 0))
    {
        return InductorWork(layout, args);
    }
    if (!args || layout.empty() || !args[0] || layout[0].size == 0 ||
        mangled.find("multi_tensor_apply_kernel") == std::string_view::npos)
    {
        return {};
    }
    const std::string_view meta(static_cast<const char*>(args[0]), layout[0].size);
    const auto n = MultiTensorElements(mangled, meta, blocks);
    return n ? "elements=" + std::to_string(*n) : std::string();
}

} // namespace phantora::kernel_args
