// Determinism: every operator's forward output and gradient are bit-identical across repeated runs and across 1,
// 2 and 8 threads of the fast path, in both layouts. Outputs are poisoned with NaN before every run, so a cell
// left unwritten in one run shows up as a difference.
#include <cmath>

// GCC 12 reports a false -Wrestrict inside std::string operator+ when bits_equal is inlined at -O3 (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "op_cases.hpp"
#include "poolkit/threads.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

struct Results {
  Tensor y, dx;
};

Results run_case(const OpCase& c, const Tensor& x, const Tensor& dy, Layout layout) {
  Results r{filled(x.dtype(), c.y_shape, std::nan(""), layout), filled(x.dtype(), c.x_shape, std::nan(""), layout)};
  c.forward(x, r.y);
  c.backward(x, dy, r.dx);
  return r;
}

class ReliabilityDeterminism : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(0); }
};

TEST_F(ReliabilityDeterminism, EveryOperatorIsBitIdenticalAcrossRunsAndThreadCounts) {
  for (const OpCase& c : all_op_cases())
    for (DType dt : {DType::f32, DType::f64, DType::bf16})
      for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
        std::string trace = c.name;
        trace += layout == Layout::ChannelsLast ? " channels-last " : " channels-first ";
        trace += dtype_name(dt);
        SCOPED_TRACE(trace);
        Tensor x = copy(distinct_tensor(dt, c.x_shape, 7, c.positive_input, Layout::ChannelsFirst, 0.125), layout);
        Tensor dy = copy(uniform_tensor(dt, c.y_shape, 8), layout);
        set_num_threads(1);
        Results base = run_case(c, x, dy, layout);
        for (int threads : {1, 2, 8, 2}) {
          set_num_threads(threads);
          Results again = run_case(c, x, dy, layout);
          EXPECT_TRUE(bits_equal(base.y, again.y)) << threads << " threads, forward";
          EXPECT_TRUE(bits_equal(base.dx, again.dx)) << threads << " threads, backward";
        }
      }
}

// Max pooling with each saved-argmax form: the indices and the routed gradient are identical across thread counts.
TEST_F(ReliabilityDeterminism, MaxPoolArgmaxFormsAreBitIdenticalAcrossThreadCounts) {
  Geometry g = torch_geometry({13, 11}, {3}, {2}, {1}, {2}, true);
  Shape xs{3, 5, 13, 11};
  Shape ys = out_shape(g, xs);
  Tensor x = distinct_tensor(DType::f32, xs, 3), dy = uniform_tensor(DType::f32, ys, 4);
  for (DType form : {DType::i64, DType::u8, DType::i32}) {
    SCOPED_TRACE(dtype_name(form));
    auto run = [&](int threads, Tensor& y, Tensor& am, Tensor& dx) {
      set_num_threads(threads);
      y = filled(DType::f32, ys, std::nan(""));
      am = filled(form, ys, form == DType::u8 ? 255 : -1);
      dx = filled(DType::f32, xs, std::nan(""));
      max_pool_forward(g, x, y, am);
      max_pool_backward(g, dy, am, x, dx);
    };
    Tensor y1, a1, d1;
    run(1, y1, a1, d1);
    for (int threads : {2, 8}) {
      Tensor y, a, d;
      run(threads, y, a, d);
      EXPECT_TRUE(bits_equal(y1, y)) << threads;
      EXPECT_TRUE(bits_equal(a1, a)) << threads;
      EXPECT_TRUE(bits_equal(d1, d)) << threads;
    }
  }
}

// Tensors large enough that the fast path splits them between threads.
TEST_F(ReliabilityDeterminism, LargeMaxAndAvgAreBitIdenticalAcrossThreadCounts) {
  Shape xs{4, 24, 61, 67};
  Geometry g = torch_geometry({61, 67}, {3}, {2}, {1}, {1}, true);
  Shape ys = out_shape(g, xs);
  for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    Tensor x = copy(uniform_tensor(DType::f32, xs, 1), layout), dy = copy(uniform_tensor(DType::f32, ys, 2), layout);
    auto run = [&](int threads) {
      set_num_threads(threads);
      std::vector<Tensor> r{filled(DType::f32, ys, std::nan(""), layout), filled(DType::i64, ys, -1, layout),
                            filled(DType::f32, xs, std::nan(""), layout), filled(DType::f32, ys, std::nan(""), layout),
                            filled(DType::f32, xs, std::nan(""), layout)};
      max_pool_forward(g, x, r[0], r[1]);
      max_pool_backward(g, dy, r[1], x, r[2]);
      avg_pool_forward(g, AvgOptions{}, x, r[3]);
      avg_pool_backward(g, AvgOptions{}, dy, r[4]);
      return r;
    };
    std::vector<Tensor> one = run(1);
    for (int threads : {2, 8}) {
      std::vector<Tensor> many = run(threads);
      for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(bits_equal(one[i], many[i])) << threads << " threads, output " << i;
    }
  }
}

}  // namespace
}  // namespace poolkit::test
