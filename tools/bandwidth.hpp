#pragma once
// The memory bandwidths `poolkit bench` measures beside each row, each over buffers far past the caches.
#include <cstddef>
#include <functional>
#include <vector>

namespace poolkit::cli {

// Median of timed runs after one warm-up; stops early when the runs pass three seconds.
double median_seconds(int reps, const std::function<void()>& f);

// dst[begin, end) (whole 64-byte lines, 16-byte aligned) by streaming stores of 4-byte words counting up from
// begin / 4 + 1: no line of zeros (see bandwidth.cpp: why).
void stream_words(char* dst, size_t begin, size_t end);

class Bandwidth {
 public:
  // A plain memcpy of 256 MiB on one thread, counted as bytes read + written.
  double copy(int reps);
  // A vectorised sum over 256 MiB on `threads` threads: bytes read per second.
  double read(int reps, int threads);
  // Streaming (non-temporal) stores of words that all differ over 256 MiB on `threads` threads: bytes written per
  // second.
  double write(int reps, int threads);

 private:
  std::vector<char> a_ = std::vector<char>(size_t(256) << 20, 1), b_ = std::vector<char>(size_t(256) << 20, 0);
};

}  // namespace poolkit::cli
