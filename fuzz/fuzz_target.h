// The frame every fuzz target is written in.
//
// A target is a function `int Name(const uint8_t* data, size_t size)` that feeds one input to
// one of podtopo's parsers and checks what must hold for any input: no crash, no sanitizer
// report, and the target's invariants (parse -> print -> parse gives the same value; a
// checkpoint that loads has a checksum that verifies; ...). It is declared with
//
//   PODTOPO_FUZZ_TARGET(quantity) { ... use data, size ...; return 0; }
//
// which defines podtopo::fuzz::Fuzz_quantity and registers it under the name "quantity".
// Two programs are built from the same sources (fuzz/CMakeLists.txt):
//   * with clang and -DPODTOPO_FUZZ=ON, one libFuzzer executable per target
//     (`build/fuzz/quantity_fuzzer`), whose LLVMFuzzerTestOneInput calls the function;
//     scripts/fuzz.sh TARGET SECONDS runs it;
//   * in every build with tests, `fuzz_regression_test` (GoogleTest, in ctest), which replays
//     fuzz/regressions/<target>/* (inputs that once crashed or broke an invariant) and the seed
//     corpus generated from the fixtures through every target.
// An invariant that fails calls FUZZ_CHECK's abort after printing what differed, which
// libFuzzer reports as a crash (and saves the input) and ctest as a failed test.
#ifndef PODTOPO_FUZZ_FUZZ_TARGET_H_
#define PODTOPO_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace podtopo::fuzz {

using TargetFn = int (*)(const uint8_t* data, size_t size);

// Every target linked into this program, by name.
std::map<std::string, TargetFn>& Targets();

struct Registration {
  Registration(const char* name, TargetFn fn) { Targets()[name] = fn; }
};

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void InvariantFailed(const char* file, int line, const char* cond,
                                         const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n%s\n", file, line, cond,
               detail.c_str());
  std::abort();
}

// The checkpoint writers' deliberate refusal to rewrite a file holding fields podtopo does not
// model inside modelled values (checkpoint/kept_fields.h).
template <typename Status>
bool RefusedForUnknownFields(const Status& s) {
  return !s.ok() && s.message().find("podtopo does not rewrite this") != std::string_view::npos;
}

}  // namespace podtopo::fuzz

#define PODTOPO_FUZZ_TARGET(name)                                                   \
  namespace podtopo::fuzz {                                                         \
  int Fuzz_##name(const uint8_t* data, size_t size);                                \
  static const Registration kRegistration_##name(#name, &Fuzz_##name);               \
  }                                                                                 \
  int podtopo::fuzz::Fuzz_##name(const uint8_t* data, size_t size)

// Aborts with `detail` (a std::string expression, evaluated only on failure) when `cond` is false.
#define FUZZ_CHECK(cond, detail)                                                     \
  do {                                                                               \
    if (!(cond)) ::podtopo::fuzz::InvariantFailed(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

#endif  // PODTOPO_FUZZ_FUZZ_TARGET_H_
