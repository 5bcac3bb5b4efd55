// The data `poolkit bench` measures its write bandwidth with: no 64-byte line of zeros, which the VMs
// poolkit is measured on write about twice as fast as any other data (tools/bandwidth.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../tools/bandwidth.hpp"

namespace {

int64_t zero_lines(const char* p, size_t size) {
  int64_t n = 0;
  for (size_t i = 0; i + 64 <= size; i += 64) n += std::all_of(p + i, p + i + 64, [](char c) { return c == 0; });
  return n;
}

TEST(BenchBandwidth, MeasuresNoLineOfZeros) {
  const size_t size = size_t(1) << 20;
  alignas(64) static char written[size_t(1) << 20];
  std::fill(written, written + size, char(0));
  poolkit::cli::stream_words(written, 0, size / 2);  // as the write measure's two threads split the buffer
  poolkit::cli::stream_words(written, size / 2, size);
  EXPECT_EQ(zero_lines(written, size), 0);
  // the words count up across the threads' parts: no two lines alike
  EXPECT_NE(std::vector<char>(written, written + 64), std::vector<char>(written + size / 2, written + size / 2 + 64));
}

}  // namespace
