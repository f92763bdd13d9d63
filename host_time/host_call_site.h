// Where a boundary call came from (host_label.h): the first return address on the
// calling thread's stack that lies outside the module doing the asking (the interposer
// or the recorder), named by the module's file name and the offset in it.
#pragma once

#include <string>

namespace phantora::host_time
{

/// "libtorch_cuda.so+0x3a127c1" for the first frame outside the module that holds
/// \p self (any address in it, e.g. a function of the caller's own library); "?" when
/// the stack cannot be walked that far.  Cached per return address: after the first
/// call from a site it costs one stack walk and a hash lookup.
std::string CallSiteOutside(const void* self);

/// The same name for a known return address (a hook's own __builtin_return_address(0),
/// which is the first frame outside it): no stack walk, only the cached lookup.
std::string CallSiteOf(const void* returnAddress);

} // namespace phantora::host_time
