#include "copy_kernel_bytes.h"

#include "kernel_name_parts.h"
#include "launch_facts.h"

namespace phantora
{

std::string_view KernelBaseName(std::string_view name)
{
    // Cut the arguments: the first '(' not inside a template argument list ("(anonymous
    // namespace)" sits in the qualified name, so skip parentheses followed by "anonymous").
    int depth = 0;
    std::size_t end = name.size();
    for (std::size_t i = 0; i < name.size(); ++i)
    {
        const char c = name[i];
        if (c == '<')
            ++depth;
        else if (c == '>')
            --depth;
        else if (c == '(' && depth == 0 && name.substr(i, 10) != "(anonymous")
        {
            end = i;
            break;
        }
    }
    std::string_view head = name.substr(0, end);
    // Drop template arguments at the end of the qualified name.
    if (!head.empty() && head.back() == '>')
    {
        int d = 0;
        for (std::size_t i = head.size(); i-- > 0;)
        {
            if (head[i] == '>')
                ++d;
            else if (head[i] == '<' && --d == 0)
            {
                head = head.substr(0, i);
                break;
            }
        }
    }
    const std::size_t colon = head.rfind("::");
    if (colon != std::string_view::npos)
    {
        head = head.substr(colon + 2);
    }
    const std::size_t space = head.rfind(' ');
    return space == std::string_view::npos ? head : head.substr(space + 1);
}

std::optional<uint64_t> CopyKernelBytes(std::string_view name, const std::array<uint32_t, 3>& grid,
                                        std::string_view argFacts)
{
    const std::string_view base = KernelBaseName(name);
    if (base == "split_with_sizes_copy_out_contiguous_no_cast_kernel")
    {
        const auto stride = ArgFact(argFacts, 5);
        const auto chunks = ArgFact(argFacts, 6);
        if (!stride || !chunks)
        {
            return std::nullopt;
        }
        return 2 * *stride * *chunks;
    }
    if (base == "chunk_cat_cuda_kernel")
    {
        // The typed kernel chunk_cat_cuda_kernel<dst_t, src_t> takes slice_size and
        // chunk_size as its 9th and 10th arguments; the untyped one (char**, char*, ...)
        // has the same positions.
        const auto chunk = ArgFact(argFacts, 9);
        if (!chunk)
        {
            return std::nullopt;
        }
        const uint64_t written =
            *chunk * std::max<uint32_t>(grid[1], 1) * std::max<uint32_t>(grid[2], 1);
        uint64_t read = written;
        const auto lt = name.find("chunk_cat_cuda_kernel<");
        if (lt != std::string_view::npos)
        {
            const std::string_view targs = name.substr(lt + 22, name.find('>', lt) - lt - 22);
            const std::size_t comma = targs.find(',');
            const auto dst = ElementBytes(targs.substr(0, comma));
            const auto src =
                comma == std::string_view::npos ? dst : ElementBytes(targs.substr(comma + 1));
            if (dst && src && *dst > 0)
            {
                read = written * *src / *dst;
            }
        }
        return written + read;
    }
    return std::nullopt;
}

} // namespace phantora
