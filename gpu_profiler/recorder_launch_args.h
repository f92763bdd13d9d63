// The recorder's side of launch-argument keys (kernel_params.h): the program's kernel
// launches are intercepted, and each is tagged through CUPTI external correlation with an
// id naming its argument facts, so that the kernel's activity record can be keyed as the
// simulator keys the same launch.
#pragma once

#include <cstdint>
#include <cupti.h>
#include <string>

namespace phantora::recorder
{

/// The external correlation kind of the launch tags (GEMMs use CUSTOM0).
inline constexpr CUpti_ExternalCorrelationKind kArgsCorrelation =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;

/// The argument-facts id of the launch the calling thread is inside (0: none): a graph
/// node created by a launch during stream capture keeps it for its replays.
uint64_t CurrentLaunchArgs();

/// The argument facts a tag names; empty for an id no launch was tagged with.
std::string LaunchArgsOf(uint64_t id);

/// The driver API's module loads, function lookups and launches (CUPTI callbacks, which
/// see Triton's launcher although it calls cuLaunchKernelEx through its own dlsym of
/// libcuda): a cubin's kernels get their parameter layouts (.nv.info KPARAM_INFO) and each
/// launch is tagged with its argument facts, as the simulator keys driver-API launches.
void OnDriverApi(CUpti_CallbackId id, const CUpti_CallbackData* cb);

} // namespace phantora::recorder
