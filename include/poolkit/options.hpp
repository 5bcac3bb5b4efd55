#pragma once
#include <cstdint>
#include <optional>

namespace poolkit {

struct AvgOptions {
  bool count_include_pad = true;           // divide by the taps up to the end of the padding, or by the cells read
  std::optional<int64_t> divisor_override;  // a fixed divisor, when given
};

enum class LpConvention : uint8_t {
  Torch,  // (sum over the window of x^p / n * window_taps)^(1/p), computed as PyTorch's lp_pool does
  Onnx,   // (sum over the window of |x|^p)^(1/p)
};

struct LpOptions {
  double p = 2;
  LpConvention convention = LpConvention::Torch;
};

struct MixedOptions {
  double lambda = 0.5;  // y = lambda * max + (1 - lambda) * avg
  AvgOptions avg;
};

struct StochasticOptions {
  bool training = true;  // draw one cell with probability proportional to its value; else the expected value
  uint64_t seed = 0;     // the draw of output (n, c, o) depends on (seed, that output's flat index) alone
};

}  // namespace poolkit
