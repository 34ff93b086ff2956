// The agent's allocator settings: a small, flat resident set on every node (docs/agent.md,
// "Memory").
//
// The podtopo binary links gperftools' tcmalloc_minimal for the speed of admission (CMakeLists.txt,
// PODTOPO_MALLOC). tcmalloc keeps freed memory in per-thread and central caches and never gives
// its heap back unasked: fine for `podtopo admit`, which exits, but the agent lives for months
// under a DaemonSet's memory limit. Measured on preset:gb200 with 200 pods (tests/agent/
// agent_rss_test.py), its caches held more memory than the agent's live heap at its peak.
// A build with the system allocator (PODTOPO_MALLOC=system) gets glibc's malloc, whose one arena
// per thread (up to 8 per core) has the same effect at a smaller scale.
//
// Example (RunAgent, before the agent's threads start; then after every poll):
//   agent::UseSmallFootprintAllocator();
//   ...
//   agent::ReturnFreeMemory();
//
// Thread safety: UseSmallFootprintAllocator before any thread but the caller's is started;
// ReturnFreeMemory from any thread.
#ifndef PODTOPO_AGENT_ALLOCATOR_H_
#define PODTOPO_AGENT_ALLOCATOR_H_

#include <string>

namespace podtopo::agent {

// With tcmalloc: thread caches limited to 512 KiB in all, freed spans returned to the system at
// once (tcmalloc.aggressive_memory_decommit). With glibc's malloc: one arena (M_ARENA_MAX).
// Returns which allocator was set up, for the log: "tcmalloc" or "glibc".
std::string UseSmallFootprintAllocator();

// Gives the memory freed since the last call back to the system (tcmalloc's
// ReleaseFreeMemory; glibc's malloc_trim). Called after every poll, whose transient strings
// (the picture, the object, its YAML and JSON) are the agent's largest allocations.
void ReturnFreeMemory();

}  // namespace podtopo::agent

#endif  // PODTOPO_AGENT_ALLOCATOR_H_
