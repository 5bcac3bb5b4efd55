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
  // Each measure runs over buffers of buffer_bytes(): 256 MiB, or twice the last-level cache where that is larger
  // (an Intel Xeon VM here has 260 MiB of L3; its sum over 256 MiB read 32 GB/s, over 1 GiB 27).
  static size_t buffer_bytes();

  // A plain memcpy of the buffer on one thread, counted as bytes read + written.
  double copy(int reps);
  // A vectorised sum over the buffer on `threads` threads, each reading its part as several streams: bytes read per
  // second.
  double read(int reps, int threads);
  // Streaming (non-temporal) stores of words that all differ over the buffer on `threads` threads: bytes written per
  // second.
  double write(int reps, int threads);

 private:
  std::vector<char> a_ = std::vector<char>(buffer_bytes(), 1), b_ = std::vector<char>(buffer_bytes(), 0);
};

}  // namespace poolkit::cli
