#pragma once
#include "poolkit/cuda.hpp"
#include "poolkit/error.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/ops.hpp"
#include "poolkit/tensor.hpp"
