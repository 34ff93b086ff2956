// HumanBytes: an amount of bytes for people to read, the one byte formatter of podtopo's
// tables, pictures and comparisons (render/, compare/).
//
// Binary units, in this order of preference:
//   1. the largest unit that fits, when the amount is exact in it with at most two decimals
//      ("16Gi", "8.5Gi", "1.25Gi", "512");
//   2. the unit that holds it exactly in fewer than 10240 ("1124Mi", "1025Mi");
//   3. otherwise the largest unit that fits, rounded to three significant digits ("14.9Gi",
//      "1.46Ti", "118Mi").
// A rounded amount is for reading only: texts a user copies into a manifest (lint's and
// explain's "request at most ...") keep exact quantities, and `-o json` keeps bytes.
//
// Example:
//   HumanBytes(uint64_t{8704} << 20);     // "8.5Gi"
//   HumanBytes(uint64_t{1526000} << 20);  // "1.46Ti"
//
// Thread safety: a pure function.
#ifndef PODTOPO_RESOURCE_HUMAN_BYTES_H_
#define PODTOPO_RESOURCE_HUMAN_BYTES_H_

#include <cstdint>
#include <string>

namespace podtopo {

std::string HumanBytes(uint64_t bytes);

}  // namespace podtopo

#endif  // PODTOPO_RESOURCE_HUMAN_BYTES_H_
