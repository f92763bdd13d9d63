// Reading fixed-size values out of bytes a program we do not own handed us (fat binaries,
// cubins): every read is checked against the bytes' size.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace phantora::kernel_args
{

/// Copies the T at \p offset of \p bytes into \p out; false, leaving it as it was, if the
/// bytes end before it does.
template <class T> bool ReadAt(std::string_view bytes, uint64_t offset, T& out)
{
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    {
        return false;
    }
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return true;
}

} // namespace phantora::kernel_args
