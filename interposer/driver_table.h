// Every driver API function by name, as cuGetProcAddress hands them out (the
// table is generated at build time by generate_driver_table.sh).
#pragma once

#include <cstddef>

namespace phantora::interposer
{

struct DriverFunction
{
    const char* name;
    void* address;
};

/// The name a program built with this toolkit's cuda.h really calls for an API name.
struct DriverAlias
{
    const char* api;
    const char* symbol;
};

extern const DriverFunction kDriverFunctions[];
extern const std::size_t kDriverFunctionCount;
extern const DriverAlias kDriverAliases[];
extern const std::size_t kDriverAliasCount;

/// The function a program asking for \p api at \p cudaVersion gets, or nullptr.
void* FindDriverFunction(const char* api, int cudaVersion);

} // namespace phantora::interposer
