#pragma once
// The memory bandwidths `poolkit bench` measures beside each row, each over buffers far past the caches.
#include <cstddef>
#include <functional>
#include <vector>

namespace poolkit::cli {

// Median of timed runs after one warm-up; stops early when the runs pass three seconds.
double median_seconds(int reps, const std::function<void()>& f);

class Bandwidth {
 public:
  // A plain memcpy of 256 MiB on one thread, counted as bytes read + written.
  double copy(int reps);
  // A vectorised sum over 256 MiB on `threads` threads: bytes read per second.
  double read(int reps, int threads);
  // Streaming (non-temporal) stores over 256 MiB on `threads` threads: bytes written per second.
  double write(int reps, int threads);

 private:
  std::vector<char> a_ = std::vector<char>(size_t(256) << 20, 1), b_ = std::vector<char>(size_t(256) << 20, 0);
};

}  // namespace poolkit::cli
