#include "agent/allocator.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace podtopo::agent {
namespace {

// gperftools' C entry points (gperftools/malloc_extension_c.h), looked up at run time: the
// agent's library links no allocator; the podtopo binary may carry tcmalloc or not (a
// PODTOPO_MALLOC=system or sanitizer build).
using SetNumericProperty = int (*)(const char*, size_t);
using ReleaseFreeMemoryFn = void (*)();

SetNumericProperty TcmallocSetProperty() {
  return reinterpret_cast<SetNumericProperty>(
      dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty"));
}

ReleaseFreeMemoryFn TcmallocRelease() {
  return reinterpret_cast<ReleaseFreeMemoryFn>(
      dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
}

}  // namespace

std::string UseSmallFootprintAllocator() {
  if (SetNumericProperty set = TcmallocSetProperty(); set != nullptr) {
    set("tcmalloc.max_total_thread_cache_bytes", 512 << 10);
    set("tcmalloc.aggressive_memory_decommit", 1);
    return "tcmalloc";
  }
  mallopt(M_ARENA_MAX, 1);
  return "glibc";
}

void ReturnFreeMemory() {
  if (ReleaseFreeMemoryFn release = TcmallocRelease(); release != nullptr) {
    release();
    return;
  }
  malloc_trim(0);
}

}  // namespace podtopo::agent
