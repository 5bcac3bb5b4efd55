// The fast CPU backend. Nothing is specialised yet: every request goes to the reference.
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../backends.hpp"

namespace poolkit::cpu {
#define POOLKIT_OP(name, params, args, device_tensor) \
  bool name params { return false; }
#include "poolkit/ops_list.inc"
#undef POOLKIT_OP
}  // namespace poolkit::cpu
