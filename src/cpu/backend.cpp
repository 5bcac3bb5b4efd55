// The operators the fast CPU path does not specialise: they return false and the reference does the work.
// Max and average pooling live in forward.cpp and backward.cpp.
#include "../backends.hpp"

namespace poolkit::cpu {

bool lp_pool_forward(const Geometry&, const LpOptions&, const TensorView&, const TensorView&) { return false; }
bool lp_pool_backward(const Geometry&, const LpOptions&, const TensorView&, const TensorView&, const TensorView&) {
  return false;
}
bool mixed_pool_forward(const Geometry&, const MixedOptions&, const TensorView&, const TensorView&) { return false; }
bool mixed_pool_backward(const Geometry&, const MixedOptions&, const TensorView&, const TensorView&,
                         const TensorView&, double*) {
  return false;
}
bool stochastic_pool_forward(const Geometry&, const StochasticOptions&, const TensorView&, const TensorView&) {
  return false;
}
bool stochastic_pool_backward(const Geometry&, const StochasticOptions&, const TensorView&, const TensorView&,
                              const TensorView&) {
  return false;
}
bool fractional_max_pool_forward(const Geometry&, const TensorView&, const TensorView&, const TensorView&,
                                 const TensorView&) {
  return false;
}
bool fractional_max_pool_backward(const Geometry&, const TensorView&, const TensorView&, const TensorView&,
                                  const TensorView&, const TensorView&) {
  return false;
}
bool max_unpool_forward(const TensorView&, const TensorView&, const TensorView&) { return false; }
bool max_unpool_backward(const TensorView&, const TensorView&, const TensorView&) { return false; }

}  // namespace poolkit::cpu
