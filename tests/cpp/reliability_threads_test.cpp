// Thread safety: many std::threads calling every operator at once, each on its own tensors, get the same bits as
// one thread alone. Run under ThreadSanitizer by scripts/test-steps/60-tsan.sh (filter ReliabilityThreads*).
#include <cmath>
#include <thread>

// GCC 12 reports a false -Wrestrict inside std::string operator+ when bits_equal is inlined at -O3 (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "op_cases.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

struct Job {
  Tensor x, dy, y, dx;  // inputs, then this thread's outputs
};

Job make_job(const OpCase& c, uint64_t seed) {
  return Job{distinct_tensor(DType::f32, c.x_shape, seed, c.positive_input, Layout::ChannelsFirst, 0.125),
             uniform_tensor(DType::f32, c.y_shape, seed + 100), Tensor(), Tensor()};
}

void run(const OpCase& c, Job& j) {
  j.y = filled(DType::f32, c.y_shape, std::nan(""));
  j.dx = filled(DType::f32, c.x_shape, std::nan(""));
  c.forward(j.x, j.y);
  c.backward(j.x, j.dy, j.dx);
}

TEST(ReliabilityThreads, ConcurrentCallsMatchOneThread) {
  const std::vector<OpCase> cases = all_op_cases();
  constexpr int kThreads = 8, kRounds = 3;
  // Expected results, one thread, one call at a time.
  std::vector<std::vector<Job>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (size_t k = 0; k < cases.size(); ++k) {
      expected[t].push_back(make_job(cases[k], 10 * uint64_t(t) + k));
      run(cases[k], expected[t].back());
    }
  // The same work from kThreads threads at once, every operator in a different order per thread.
  std::vector<std::vector<Job>> got(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (size_t k = 0; k < cases.size(); ++k) got[t].push_back(make_job(cases[k], 10 * uint64_t(t) + k));
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round)
        for (size_t i = 0; i < cases.size(); ++i) {
          size_t k = (i * 7 + size_t(t) * 3 + size_t(round)) % cases.size();
          run(cases[k], got[t][k]);
        }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (size_t k = 0; k < cases.size(); ++k) {
      SCOPED_TRACE(cases[k].name + " thread " + std::to_string(t));
      EXPECT_TRUE(bits_equal(expected[t][k].y, got[t][k].y));
      EXPECT_TRUE(bits_equal(expected[t][k].dx, got[t][k].dx));
    }
}

// Many threads sharing one read-only input and geometry, each writing its own outputs, including saved argmax.
TEST(ReliabilityThreads, SharedInputsSeparateOutputs) {
  Geometry g = torch_geometry({33, 35}, {3}, {2}, {1}, {1}, true);
  Shape xs{2, 8, 33, 35}, ys = out_shape(g, xs);
  Tensor x = uniform_tensor(DType::f32, xs, 3), dy = uniform_tensor(DType::f32, ys, 4);
  Tensor y1(DType::f32, ys), a1(DType::u8, ys), d1(DType::f32, xs);
  max_pool_forward(g, x, y1, a1);
  max_pool_backward(g, dy, a1, x, d1);
  constexpr int kThreads = 8;
  std::vector<Tensor> ys_(kThreads), as(kThreads), ds(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      ys_[t] = filled(DType::f32, ys, std::nan(""));
      as[t] = filled(DType::u8, ys, 255);
      ds[t] = filled(DType::f32, xs, std::nan(""));
      for (int round = 0; round < 3; ++round) {
        max_pool_forward(g, x, ys_[t], as[t]);
        max_pool_backward(g, dy, as[t], x, ds[t]);
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(bits_equal(y1, ys_[t])) << t;
    EXPECT_TRUE(bits_equal(a1, as[t])) << t;
    EXPECT_TRUE(bits_equal(d1, ds[t])) << t;
  }
}

}  // namespace
}  // namespace poolkit::test
