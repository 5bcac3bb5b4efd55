#pragma once
// Counter-based random numbers: the value for (seed, counter) depends on nothing else, so every backend and
// thread count draws the same numbers.
#include <cstdint>

#include "poolkit/config.hpp"

namespace poolkit {

POOLKIT_HD inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
POOLKIT_HD inline double uniform01(uint64_t seed, uint64_t counter) {
  return double(mix64(mix64(seed) ^ counter) >> 11) * 0x1.0p-53;
}

}  // namespace poolkit
