#pragma once
// A geometry recipe as the Python layer flattens it (poolkit._params.flat_recipe): the builder's name, its int
// lists laid end to end (ints) with their lengths (lens), its reals, text and flag. poolkit._core and the torch
// operators' C++ kernels (torch_ops/) both build geometries from it, so the recipe has one meaning.
#include <cstdint>
#include <string>
#include <vector>

#include "poolkit/geometry.hpp"

namespace poolkit::py {

// The geometry the recipe describes for spatial input size `in`; poolkit::Error for a bad recipe or size.
Geometry recipe_geometry(const std::string& builder, const std::vector<int64_t>& ints,
                         const std::vector<int64_t>& lens, const std::vector<double>& reals, const std::string& text,
                         bool flag, const std::vector<int64_t>& in);

}  // namespace poolkit::py
