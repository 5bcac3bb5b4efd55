#pragma once
// A saved flat argmax (int64, PyTorch's form) turned into window-local codes before a backward, so that
// every backward path runs on the compact form. Each value is checked on the way: the cell it names must be a
// cell of its output's window.
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cpu {

// g3: the geometry as three axes. local: the shape of flat, uint8, int16 or int32 wide enough for the window.
// False when a value names no cell of its window, or when the geometry is one this conversion does not take (taps
// that one division per axis cannot tell apart, huge spans): the caller then works from the flat form.
bool flat_argmax_to_local(const Geometry& g3, const TensorView& flat, const TensorView& local);

}  // namespace poolkit::cpu
