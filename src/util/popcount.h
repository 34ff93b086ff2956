// PopCount64: the number of set bits of a 64-bit word, without a library call.
//
// The build targets x86-64 without the POPCNT instruction, where std::popcount becomes a call
// to libgcc's __popcountdi2. The masks and CPU sets of admission count bits in their inner
// loops; this is the same count, inline.
//
//   PopCount64(0b1011);  // 3
#ifndef PODTOPO_UTIL_POPCOUNT_H_
#define PODTOPO_UTIL_POPCOUNT_H_

#include <cstdint>

namespace podtopo {

inline int PopCount64(uint64_t x) {
#if defined(__POPCNT__)
  return __builtin_popcountll(x);
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
#endif
}

}  // namespace podtopo

#endif  // PODTOPO_UTIL_POPCOUNT_H_
