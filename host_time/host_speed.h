// How fast one host thread runs the kind of code that sits between a training program's
// GPU calls (an interpreter and a dispatcher: hash lookups, small allocations, indirect
// calls, branches), as thread CPU nanoseconds per round of a fixed workload.  The
// recorder measures it on the GPU machine and stores it with the profile; the simulator
// measures it at start-up, and the ratio scales whatever host time it has to measure on
// its own CPU (host time the profile does not hold, see host_gap_table.h).
#pragma once

namespace phantora::host_time
{

/// Thread CPU nanoseconds per round: the least of several timed batches, so a busy
/// machine's interruptions count as little as possible (about 0.2 s in all).
double MeasureHostSpeedNs();

} // namespace phantora::host_time
