#include "poolkit/threads.hpp"

#include <omp.h>

#include <atomic>

#include "poolkit/error.hpp"

namespace poolkit {

namespace {
std::atomic<int> g_threads{0};  // 0: OpenMP's default
}

void set_num_threads(int n) {
  if (n < 0) fail("n", "the thread count must be >= 0 (0 restores the default)");
  g_threads = n;
}

int num_threads() {
  int n = g_threads;
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace poolkit
