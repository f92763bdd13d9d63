#include "elf_sections.h"

#include "bytes_at.h"

#include <algorithm>
#include <cstring>
#include <elf.h>

namespace phantora::kernel_args
{

bool ForEachElfSection(std::string_view image,
                       const std::function<void(std::string_view, std::string_view)>& visit)
{
    Elf64_Ehdr eh;
    if (!ReadAt(image, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
    {
        return false;
    }
    auto header = [&](uint64_t i, Elf64_Shdr& sh)
    { return ReadAt(image, eh.e_shoff + i * sizeof(Elf64_Shdr), sh); };
    auto contents = [&](const Elf64_Shdr& sh, std::string_view& out)
    {
        if (sh.sh_type == SHT_NOBITS || sh.sh_offset > image.size() ||
            image.size() - sh.sh_offset < sh.sh_size)
        {
            return false;
        }
        out = image.substr(sh.sh_offset, sh.sh_size);
        return true;
    };
    Elf64_Shdr strHeader;
    std::string_view names;
    if (!header(eh.e_shstrndx, strHeader) || !contents(strHeader, names))
    {
        return false;
    }
    for (uint64_t i = 1; i < eh.e_shnum; ++i)
    {
        Elf64_Shdr sh;
        std::string_view data;
        if (!header(i, sh) || sh.sh_name >= names.size() || !contents(sh, data))
        {
            continue;
        }
        const std::string_view rest = names.substr(sh.sh_name);
        visit(rest.substr(0, rest.find('\0')), data);
    }
    return true;
}

} // namespace phantora::kernel_args

namespace phantora::kernel_args
{

std::size_t ElfImageSize(const void* image)
{
    if (!image)
    {
        return 0;
    }
    Elf64_Ehdr eh;
    std::memcpy(&eh, image, sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    {
        return 0;
    }
    const std::size_t sections = eh.e_shoff + std::size_t{eh.e_shnum} * eh.e_shentsize;
    const std::size_t programs = eh.e_phoff + std::size_t{eh.e_phnum} * eh.e_phentsize;
    return std::max(sections, programs);
}

} // namespace phantora::kernel_args
