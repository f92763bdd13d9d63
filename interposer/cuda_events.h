// What a replayed CUDA graph needs of the program's events (cuda_event_hooks.cc keeps
// them): an external event record node gives its event a new record at each replay,
// and an external wait node waits for the event's record current at the replay.
#pragma once

#include <cstdint>

namespace phantora::interposer
{

/// The record \p event stands for now (0: never recorded, or not an event).
uint64_t CurrentRecord(void* event);
/// Makes \p record the one \p event stands for; false if \p event is not an event.
bool SetCurrentRecord(void* event, uint64_t record);

} // namespace phantora::interposer
