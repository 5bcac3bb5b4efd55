// Gradients of every operator in float64: central differences, the adjoint identity, repeatability, and the
// three argmax forms.
#include "op_cases.hpp"

namespace poolkit::test {
namespace {

class Gradient : public ::testing::TestWithParam<OpCase> {};

Tensor make_input(const OpCase& c, uint64_t seed) {
  // distinct values spaced well above the step, so no max/argmax or sign changes under perturbation
  return distinct_tensor(DType::f64, c.x_shape, seed, c.positive_input);
}

double loss(const OpCase& c, const TensorView& x, const TensorView& w) {
  Tensor y = filled(DType::f64, c.y_shape, std::nan(""));
  c.forward(x, y);
  return dot(y, w);
}

TEST_P(Gradient, MatchesCentralDifferences) {
  const OpCase& c = GetParam();
  Tensor x = make_input(c, 1);
  Tensor w = uniform_tensor(DType::f64, c.y_shape, 2);
  Tensor dx = filled(DType::f64, c.x_shape, std::nan(""));
  c.backward(x, w, dx);
  const double h = 1e-5;
  int64_t checked = 0;
  for_each_index(c.x_shape, [&](const int64_t* i) {
    double x0 = get(x, i);
    set(x, i, x0 + h);
    double up = loss(c, x, w);
    set(x, i, x0 - h);
    double down = loss(c, x, w);
    set(x, i, x0);
    double fd = (up - down) / (2 * h), an = get(dx, i);
    ASSERT_NEAR(an, fd, 1e-6 * (1 + std::abs(fd))) << c.name << " at flat " << checked;
    ++checked;
  });
  EXPECT_EQ(checked, c.x_shape.numel());
}

TEST_P(Gradient, AdjointIdentity) {
  // <dy, J v> = <J^T dy, v>, J v measured as a directional difference.
  const OpCase& c = GetParam();
  Tensor x = make_input(c, 3);
  Tensor dy = uniform_tensor(DType::f64, c.y_shape, 4);
  Tensor v = uniform_tensor(DType::f64, c.x_shape, 5);
  Tensor dx = filled(DType::f64, c.x_shape, std::nan(""));
  c.backward(x, dy, dx);
  const double h = 1e-6;
  Tensor xp = copy(x), xm = copy(x);
  for_each_index(c.x_shape, [&](const int64_t* i) {
    set(xp, i, get(x, i) + h * get(v, i));
    set(xm, i, get(x, i) - h * get(v, i));
  });
  double lhs = (loss(c, xp, dy) - loss(c, xm, dy)) / (2 * h);
  double rhs = dot(dx, v);
  EXPECT_NEAR(lhs, rhs, 1e-6 * (1 + std::abs(rhs))) << c.name;
}

TEST_P(Gradient, BackwardTwiceGivesIdenticalBits) {
  const OpCase& c = GetParam();
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    Tensor x = uniform_tensor(dt, c.x_shape, 6, c.positive_input ? 0.1 : -1, 1);
    Tensor dy = uniform_tensor(dt, c.y_shape, 7);
    Tensor a = filled(dt, c.x_shape, std::nan("")), b = filled(dt, c.x_shape, 1234.0);
    c.backward(x, dy, a);
    c.backward(x, dy, b);
    EXPECT_TRUE(bits_equal(a, b)) << c.name << " " << dtype_name(dt);
    Tensor ya = filled(dt, c.y_shape, std::nan("")), yb = filled(dt, c.y_shape, 1234.0);
    c.forward(x, ya);
    c.forward(x, yb);
    EXPECT_TRUE(bits_equal(ya, yb)) << c.name << " " << dtype_name(dt);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOperators, Gradient, ::testing::ValuesIn(all_op_cases()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The same gradient from no argmax, the compact local argmax in every width that fits, and the flat index.
TEST(ArgmaxForms, GiveIdenticalGradients) {
  struct G { std::string name; Shape xs; Geometry g; };
  std::vector<G> cases = {
      {"overlap2d", {2, 3, 9, 8}, torch_geometry({9, 8}, {3}, {1}, {1}, {1}, false)},
      {"ceil_dilated", {2, 2, 9, 8}, torch_geometry({9, 8}, {3, 2}, {2, 2}, {1, 1}, {2, 3}, true)},
      {"pool3d", {1, 2, 6, 5, 7}, torch_geometry({6, 5, 7}, {2}, {2}, {1}, {1}, false)},
      {"adaptive", {2, 2, 9, 7}, adaptive_geometry({9, 7}, {4, 5})},
      {"global", {2, 3, 5, 6}, global_geometry({5, 6})},
      {"big_window", {1, 2, 40, 40}, torch_geometry({40, 40}, {20}, {10}, {0}, {1}, false)},  // 400 cells: int16
  };
  for (const G& c : cases) {
    for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
      // ties included: small integers repeat, and the first maximum must win in every form
      Tensor x(dt, c.xs);
      std::mt19937 rng(9);
      for_each_index(c.xs, [&](const int64_t* i) { set(x, i, double(rng() % 5)); });
      Shape ys = out_shape(c.g, c.xs);
      Tensor dy = uniform_tensor(dt, ys, 10), y(dt, ys);
      Tensor flat(DType::i64, ys);
      max_pool_forward(c.g, x, y, flat);
      Tensor from_none = filled(dt, c.xs, std::nan(""));
      max_pool_backward(c.g, dy, {}, x, from_none);
      Tensor from_flat = filled(dt, c.xs, std::nan(""));
      max_pool_backward(c.g, dy, flat, {}, from_flat);
      EXPECT_TRUE(bits_equal(from_none, from_flat)) << c.name;
      for (DType it : {DType::u8, DType::i16, DType::i32}) {
        if (dtype_size(it) < dtype_size(local_argmax_dtype(c.g))) continue;
        Tensor local = filled(it, ys, -1), y2(dt, ys);
        max_pool_forward(c.g, x, y2, local);
        EXPECT_TRUE(bits_equal(y, y2)) << c.name;
        Tensor from_local = filled(dt, c.xs, std::nan(""));
        max_pool_backward(c.g, dy, local, {}, from_local);
        EXPECT_TRUE(bits_equal(from_none, from_local)) << c.name << " " << dtype_name(it);
      }
    }
  }
  EXPECT_EQ(local_argmax_dtype(cases.back().g), DType::i16);
}

// d(loss)/d(lambda) of mixed pooling against a central difference.
TEST(MixedPool, LambdaGradient) {
  Geometry g = torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false);
  Shape xs{2, 3, 7, 6}, ys = out_shape(g, xs);
  Tensor x = distinct_tensor(DType::f64, xs, 12), w = uniform_tensor(DType::f64, ys, 13);
  Tensor dx(DType::f64, xs), y(DType::f64, ys);
  double dl = std::nan("");
  mixed_pool_backward(g, MixedOptions{0.4, {}}, w, x, dx, &dl);
  auto L = [&](double lam) { mixed_pool_forward(g, MixedOptions{lam, {}}, x, y); return dot(y, w); };
  double h = 1e-6;
  EXPECT_NEAR(dl, (L(0.4 + h) - L(0.4 - h)) / (2 * h), 1e-6);
}

}  // namespace
}  // namespace poolkit::test
