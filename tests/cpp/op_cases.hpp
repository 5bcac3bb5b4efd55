#pragma once
// Every operator as a pair of closures over one fixed geometry, so gradient, layout and repeatability tests
// can run over the whole family. `forward(x, y)` and `backward(x, dy, dx)` call the dispatching API.
#include <string>
#include <vector>

#include "test_util.hpp"

namespace poolkit::test {

struct OpCase {
  std::string name;
  Shape x_shape;
  Shape y_shape;
  bool positive_input = false;  // only defined or smooth for x > 0
  std::function<void(const TensorView& x, const TensorView& y)> forward;
  std::function<void(const TensorView& x, const TensorView& dy, const TensorView& dx)> backward;
};

inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

inline OpCase pool_case(std::string name, Shape xs, Geometry g,
                        std::function<void(const Geometry&, const TensorView&, const TensorView&)> fwd,
                        std::function<void(const Geometry&, const TensorView&, const TensorView&, const TensorView&)> bwd,
                        bool positive = false) {
  return OpCase{std::move(name), xs, out_shape(g, xs), positive,
                [g, fwd](const TensorView& x, const TensorView& y) { fwd(g, x, y); },
                [g, bwd](const TensorView& x, const TensorView& dy, const TensorView& dx) { bwd(g, x, dy, dx); }};
}

inline OpCase max_case(std::string name, Shape xs, Geometry g) {
  return pool_case(std::move(name), xs, g,
                   [](const Geometry& g, const TensorView& x, const TensorView& y) { max_pool_forward(g, x, y, {}); },
                   [](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
                     max_pool_backward(g, dy, {}, x, dx);
                   });
}

inline OpCase avg_case(std::string name, Shape xs, Geometry g, AvgOptions o) {
  return pool_case(std::move(name), xs, g,
                   [o](const Geometry& g, const TensorView& x, const TensorView& y) { avg_pool_forward(g, o, x, y); },
                   [o](const Geometry& g, const TensorView&, const TensorView& dy, const TensorView& dx) {
                     avg_pool_backward(g, o, dy, dx);
                   });
}

inline OpCase lp_case(std::string name, Shape xs, Geometry g, LpOptions o, bool positive) {
  return pool_case(std::move(name), xs, g,
                   [o](const Geometry& g, const TensorView& x, const TensorView& y) { lp_pool_forward(g, o, x, y); },
                   [o](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
                     lp_pool_backward(g, o, dy, x, dx);
                   },
                   positive);
}

// Fixed per-plane samples for fractional pooling.
inline std::shared_ptr<Tensor> fixed_samples(const Shape& xs, int rank, uint64_t seed) {
  auto s = std::make_shared<Tensor>(DType::f64, Shape{xs[0], xs[1], rank});
  fractional_samples(seed, s->view());
  return s;
}

inline std::vector<OpCase> all_op_cases() {
  std::vector<OpCase> c;
  Shape s2{2, 3, 7, 6}, s3{1, 2, 5, 6, 5}, s1{2, 2, 11};
  c.push_back(max_case("max2d_k3s2p1", s2, torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false)));
  c.push_back(max_case("max2d_ceil_dilated", s2, torch_geometry({7, 6}, {2, 3}, {2, 1}, {1, 1}, {2, 1}, true)));
  c.push_back(max_case("max3d_k2s1", s3, torch_geometry({5, 6, 5}, {2}, {1}, {0}, {1}, false)));
  c.push_back(max_case("max1d_k3s2_ceil", s1, torch_geometry({11}, {3}, {2}, {1}, {1}, true)));
  c.push_back(max_case("max2d_keras_same", s2, keras_geometry({7, 6}, {2}, {2}, "same")));
  c.push_back(max_case("adaptive_max2d", s2, adaptive_geometry({7, 6}, {3, 4})));
  c.push_back(max_case("adaptive_max3d_up", s3, adaptive_geometry({5, 6, 5}, {7, 4, 3})));
  c.push_back(max_case("global_max2d", s2, global_geometry({7, 6})));
  c.push_back(avg_case("avg2d_include_pad_ceil", s2, torch_geometry({7, 6}, {3}, {2}, {1}, {1}, true), AvgOptions{}));
  c.push_back(avg_case("avg2d_exclude_pad", s2, torch_geometry({7, 6}, {3}, {1}, {1}, {1}, false), AvgOptions{false, {}}));
  c.push_back(avg_case("avg2d_divisor", s2, torch_geometry({7, 6}, {2}, {2}, {1}, {1}, false), AvgOptions{true, 3}));
  c.push_back(avg_case("avg3d", s3, torch_geometry({5, 6, 5}, {3, 2, 2}, {2, 2, 1}, {1, 0, 1}, {1}, false), AvgOptions{}));
  c.push_back(avg_case("avg1d_onnx_asym", s1, [] {
    OnnxParams p; p.kernel_shape = {3}; p.strides = {2}; p.pads = {0, 2};
    return onnx_geometry({11}, p); }(), AvgOptions{false, {}}));
  c.push_back(avg_case("adaptive_avg2d", s2, adaptive_geometry({7, 6}, {4, 5}), AvgOptions{}));
  c.push_back(avg_case("global_avg3d", s3, global_geometry({5, 6, 5}), AvgOptions{}));
  c.push_back(lp_case("lp2d_torch_p2", s2, torch_geometry({7, 6}, {2}, {2}, {0}, {1}, true), {2, LpConvention::Torch}, false));
  c.push_back(lp_case("lp1d_torch_p3", s1, torch_geometry({11}, {3}, {2}, {0}, {1}, false), {3, LpConvention::Torch}, true));
  c.push_back(lp_case("lp3d_torch_p1.5", s3, torch_geometry({5, 6, 5}, {2}, {2}, {0}, {1}, false), {1.5, LpConvention::Torch}, true));
  c.push_back(lp_case("lp2d_onnx_p2_pad", s2, [] {
    OnnxParams p; p.kernel_shape = {3, 2}; p.pads = {1, 0, 1, 1};
    return onnx_geometry({7, 6}, p); }(), {2, LpConvention::Onnx}, false));
  c.push_back(lp_case("lp2d_onnx_p3", s2, global_geometry({7, 6}), {3, LpConvention::Onnx}, false));
  {
    MixedOptions o{0.3, AvgOptions{false, {}}};
    c.push_back(pool_case("mixed2d", s2, torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false),
        [o](const Geometry& g, const TensorView& x, const TensorView& y) { mixed_pool_forward(g, o, x, y); },
        [o](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
          mixed_pool_backward(g, o, dy, x, dx, nullptr); }));
  }
  {
    StochasticOptions o{false, 5};
    c.push_back(pool_case("stochastic2d_inference", s2, torch_geometry({7, 6}, {2}, {2}, {0}, {1}, true),
        [o](const Geometry& g, const TensorView& x, const TensorView& y) { stochastic_pool_forward(g, o, x, y); },
        [o](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
          stochastic_pool_backward(g, o, dy, x, dx); }, true));
  }
  {
    StochasticOptions o{true, 11};
    c.push_back(pool_case("stochastic3d_training", s3, torch_geometry({5, 6, 5}, {2}, {2}, {0}, {1}, false),
        [o](const Geometry& g, const TensorView& x, const TensorView& y) { stochastic_pool_forward(g, o, x, y); },
        [o](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
          stochastic_pool_backward(g, o, dy, x, dx); }, true));
  }
  for (int rank : {1, 2, 3}) {
    Shape xs = rank == 1 ? s1 : rank == 2 ? s2 : s3;
    std::vector<int64_t> in(xs.dims.begin() + 2, xs.dims.begin() + 2 + rank), out, k(size_t(rank), 2);
    for (int64_t v : in) out.push_back(v - 2);
    Geometry g = fractional_geometry(in, out, k, false);
    auto samples = fixed_samples(xs, rank, 42);
    c.push_back(pool_case("fractional_max" + std::to_string(rank) + "d", xs, g,
        [samples](const Geometry& g, const TensorView& x, const TensorView& y) {
          fractional_max_pool_forward(g, samples->view(), x, y, {}); },
        [samples](const Geometry& g, const TensorView& x, const TensorView& dy, const TensorView& dx) {
          fractional_max_pool_backward(g, samples->view(), dy, {}, x, dx); }));
  }
  {
    // Unpool: indices of a 2x2 max pool over an 8x6 plane, the unpooled plane 8x6.
    Shape xs{2, 3, 4, 3}, big{2, 3, 8, 6};
    auto idx = std::make_shared<Tensor>(DType::i64, xs);
    Tensor src = distinct_tensor(DType::f64, big, 3);
    Tensor pooled(DType::f64, xs);
    max_pool_forward(torch_geometry({8, 6}, {2}, {}, {0}, {1}, false), src, pooled, idx->view());
    c.push_back(OpCase{"max_unpool2d", xs, big, false,
        [idx](const TensorView& x, const TensorView& y) { max_unpool_forward(x, idx->view(), y); },
        [idx](const TensorView&, const TensorView& dy, const TensorView& dx) { max_unpool_backward(dy, idx->view(), dx); }});
  }
  return c;
}

}  // namespace poolkit::test
