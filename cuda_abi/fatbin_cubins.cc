#include "fatbin_cubins.h"

#include "bytes_at.h"

#include <cstdint>
#include <cstring>
#include <zstd.h>

namespace phantora::kernel_args
{

namespace
{
constexpr uint32_t kWrapperMagic = 0x466243b1;
constexpr uint32_t kContainerMagic = 0xba55ed50;
constexpr uint16_t kCubinEntry = 2;

struct ContainerHeader
{
    uint32_t magic;
    uint16_t version;
    uint16_t headerSize;
    uint64_t entriesSize; ///< bytes of entries after the header
};

struct EntryHeader
{
    uint16_t kind; ///< 1 PTX, 2 cubin
    uint16_t version;
    uint32_t headerSize;
    uint64_t payloadSize; ///< padded
};

bool StartsWith(std::string_view bytes, const char* magic, std::size_t n)
{
    return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

} // namespace

std::string CubinImage(std::string_view payload)
{
    if (StartsWith(payload,
                   "\x7f"
                   "ELF",
                   4))
    {
        return std::string(payload);
    }
    if (!StartsWith(payload, "\x28\xb5\x2f\xfd", 4))
    {
        return {};
    }
    // The payload is padded: the frame is decompressed on its own, not with the padding.
    const std::size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
    const unsigned long long size = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (ZSTD_isError(frame) || size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
        size > (1ull << 32))
    {
        return {};
    }
    std::string out(size, '\0');
    const std::size_t got = ZSTD_decompress(out.data(), out.size(), payload.data(), frame);
    if (ZSTD_isError(got) || got != size)
    {
        return {};
    }
    return out;
}

std::string_view FatbinContainerAt(const void* registered)
{
    if (!registered)
    {
        return {};
    }
    uint32_t magic = 0;
    std::memcpy(&magic, registered, sizeof magic);
    const void* container = registered;
    if (magic == kWrapperMagic)
    {
        // struct { int magic; int version; const unsigned long long* data; void* ...; }
        std::memcpy(&container, static_cast<const char*>(registered) + 8, sizeof container);
        if (!container)
        {
            return {};
        }
        std::memcpy(&magic, container, sizeof magic);
    }
    if (magic != kContainerMagic)
    {
        return {};
    }
    ContainerHeader h;
    std::memcpy(&h, container, sizeof h);
    return {static_cast<const char*>(container), h.headerSize + h.entriesSize};
}

std::vector<std::string_view> FatbinContainers(std::string_view section)
{
    std::vector<std::string_view> out;
    uint64_t at = 0;
    ContainerHeader h;
    while (ReadAt(section, at, h) && h.magic == kContainerMagic && h.headerSize >= sizeof h &&
           h.entriesSize <= section.size() - at - h.headerSize)
    {
        const uint64_t size = h.headerSize + h.entriesSize;
        out.push_back(section.substr(at, size));
        at += (size + 7) & ~uint64_t{7}; // containers are 8-byte aligned in the section
    }
    return out;
}

std::vector<std::string_view> CubinEntries(std::string_view container)
{
    std::vector<std::string_view> out;
    ContainerHeader h;
    if (!ReadAt(container, 0, h) || h.magic != kContainerMagic || h.headerSize < sizeof h ||
        h.headerSize > container.size())
    {
        return out;
    }
    const std::string_view entries = container.substr(h.headerSize);
    uint64_t at = 0;
    EntryHeader e;
    while (ReadAt(entries, at, e) && e.headerSize >= sizeof e &&
           e.headerSize <= entries.size() - at &&
           e.payloadSize <= entries.size() - at - e.headerSize)
    {
        if (e.kind == kCubinEntry)
        {
            out.push_back(entries.substr(at + e.headerSize, e.payloadSize));
        }
        at += e.headerSize + e.payloadSize;
    }
    return out;
}

} // namespace phantora::kernel_args
