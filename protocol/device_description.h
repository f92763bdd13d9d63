// The scenario's GPU as one environment value (PHANTORA_GPU), so that a process that is no
// rank (a compile worker a rank started, the fork server) answers device queries the way
// the bridge's Welcome answers the rank, without connecting.
#pragma once

#include "messages.h"

#include <string>
#include <string_view>

namespace phantora::wire
{

/// The device fields of \p w (count, SMs, compute capability, memory, name) as
/// "count=4;sms=132;cc=9.0;memory=150754820096;name=NVIDIA H200" (the name last: it may
/// hold anything).
std::string EncodeDeviceDescription(const Welcome& w);

/// Those fields back in a Welcome (the others default); throws std::invalid_argument
/// naming the field that is missing or not a number.
Welcome DecodeDeviceDescription(std::string_view text);

} // namespace phantora::wire
