#include "recipe.hpp"

#include "poolkit/error.hpp"

namespace poolkit::py {
namespace {

using V = std::vector<int64_t>;

// The int lists of a recipe, each `lens` long in turn; `want` of them.
std::vector<V> split(const V& ints, const V& lens, size_t want, const std::string& builder) {
  if (lens.size() != want)
    fail("recipe", "builder '" + builder + "' takes " + std::to_string(want) + " int lists (got " +
                       std::to_string(lens.size()) + ")");
  std::vector<V> lists;
  size_t at = 0;
  for (int64_t n : lens) {
    if (n < 0 || size_t(n) > ints.size() - at) fail("recipe", "list lengths exceed the ints given");
    lists.emplace_back(ints.begin() + at, ints.begin() + at + n);
    at += size_t(n);
  }
  if (at != ints.size()) fail("recipe", "list lengths do not add up to the ints given");
  return lists;
}

}  // namespace

Geometry recipe_geometry(const std::string& builder, const V& ints, const V& lens, const std::vector<double>& reals,
                         const std::string& text, bool flag, const V& in) {
  if (builder == "torch") {
    auto l = split(ints, lens, 4, builder);  // kernel, stride, padding, dilation
    return torch_geometry(in, l[0], l[1], l[2], l[3], flag);
  }
  if (builder == "keras") {
    auto l = split(ints, lens, 2, builder);  // pool_size, strides
    return keras_geometry(in, l[0], l[1], text);
  }
  if (builder == "onnx") {
    auto l = split(ints, lens, 4, builder);  // kernel_shape, strides, dilations, pads
    return onnx_geometry(in, OnnxParams{l[0], l[1], l[2], l[3], text, flag});
  }
  if (builder == "adaptive") return adaptive_geometry(in, split(ints, lens, 1, builder)[0]);
  if (builder == "global") {
    split(ints, lens, 0, builder);
    return global_geometry(in);
  }
  if (builder == "fractional") {
    auto l = split(ints, lens, 2, builder);  // output size (empty: from the reals, the output ratio), kernel
    V out = l[0].empty() ? fractional_output_size(in, reals, l[1]) : l[0];
    return fractional_geometry(in, out, l[1], flag);
  }
  fail("builder", "unknown geometry builder '" + builder + "'");
}

}  // namespace poolkit::py
