// Status propagation helpers used across podtopo.
//
// Every fallible function in the core library returns absl::Status or absl::StatusOr<T>;
// no exception crosses a library API. These macros keep call sites short:
//
//   PODTOPO_RETURN_IF_ERROR(state.Validate());
//   PODTOPO_ASSIGN_OR_RETURN(CpuSet cpus, CpuSet::Parse(text));
#ifndef PODTOPO_UTIL_STATUS_MACROS_H_
#define PODTOPO_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PODTOPO_RETURN_IF_ERROR(expr)               \
  do {                                              \
    ::absl::Status podtopo_status_ = (expr);        \
    if (!podtopo_status_.ok()) return podtopo_status_; \
  } while (0)

#define PODTOPO_STATUS_CONCAT_INNER_(a, b) a##b
#define PODTOPO_STATUS_CONCAT_(a, b) PODTOPO_STATUS_CONCAT_INNER_(a, b)

#define PODTOPO_ASSIGN_OR_RETURN(lhs, expr) \
  PODTOPO_ASSIGN_OR_RETURN_IMPL_(PODTOPO_STATUS_CONCAT_(podtopo_statusor_, __LINE__), lhs, expr)

#define PODTOPO_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // PODTOPO_UTIL_STATUS_MACROS_H_
