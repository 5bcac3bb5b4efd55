#include "pool_plan.hpp"

#include <algorithm>

#include "poolkit/error.hpp"

namespace pkmex {
namespace {

// One value per pooled dimension from a scalar or a vector of that many.
std::vector<int64_t> per_dim(const mxArray* a, const char* arg, size_t r, int64_t min) {
  std::vector<int64_t> v = int_values(a, arg, min);
  if (v.size() == 1) v.assign(r, v[0]);
  if (v.size() != r)
    bad(arg, "must be a scalar or have one entry per pooled dimension (" + std::to_string(r) + "), got " +
                 std::to_string(mxGetNumberOfElements(a)));
  return v;
}

struct Group {  // non-pooled dimensions merged into one core axis
  int64_t size = 1, xstride = 0, ystride = 0;
};

}  // namespace

std::vector<mwSize> mw_dims(const std::vector<int64_t>& d) {
  std::vector<mwSize> m(d.begin(), d.end());
  while (m.size() < 2) m.push_back(1);
  return m;
}

bool Plan::padded() const {
  for (int a = 0; a < g.rank; ++a)
    if (g.axes[a].pad_lo > 0 || g.axes[a].pad_hi > 0) return true;
  return false;
}

poolkit::TensorView Plan::x_view(const void* data, poolkit::DType t) const {
  return poolkit::TensorView(const_cast<void*>(data), t, xshape, xst);
}
poolkit::TensorView Plan::y_view(const void* data, poolkit::DType t) const {
  return poolkit::TensorView(const_cast<void*>(data), t, yshape, yst);
}

Plan make_plan(const std::vector<int64_t>& input_size, const mxArray* poolsize, const Options& o) {
  Plan p;
  p.format = o.data_format;
  if (p.format.empty())
    bad("DataFormat", "is required for a numeric array: one letter (S, C, B, T, U) per dimension, e.g. 'SSCB'");
  size_t nd = p.format.size();
  for (size_t i = nd; i < input_size.size(); ++i)
    if (input_size[i] != 1)
      bad("DataFormat", "has " + std::to_string(nd) + " letters but X has " + std::to_string(input_size.size()) +
                            " dimensions");
  p.xdims.assign(nd, 1);
  for (size_t i = 0; i < std::min(nd, input_size.size()); ++i) p.xdims[i] = input_size[i];
  p.xstride.assign(nd, 1);
  for (size_t i = 1; i < nd; ++i) p.xstride[i] = p.xstride[i - 1] * p.xdims[i - 1];
  for (size_t i = 0; i < nd; ++i) {
    if (std::count(p.format.begin(), p.format.end(), p.format[i]) > 1 && p.format[i] != 'S')
      bad("DataFormat", "may hold '" + std::string(1, p.format[i]) + "' only once, got '" + p.format + "'");
    if (o.pool_format.find(p.format[i]) != std::string::npos) p.pooled.insert(p.pooled.begin(), int(i));
  }
  size_t r = p.pooled.size();
  if (r == 0 || r > 3)
    bad("DataFormat", "must have 1 to 3 dimensions labelled with PoolFormat '" + o.pool_format + "', got '" +
                          p.format + "'");

  // Core spatial axis a is MATLAB dimension pooled[a] (reverse order); per-dim arguments are in MATLAB order.
  std::vector<int64_t> in(r);
  for (size_t a = 0; a < r; ++a) in[a] = p.xdims[p.pooled[a]];
  auto reversed = [](std::vector<int64_t> v) { std::reverse(v.begin(), v.end()); return v; };
  bool global = is_text(poolsize);
  if (global) {
    if (text(poolsize, "poolsize") != "global") bad("poolsize", "must be a numeric vector or 'global'");
    if (o.stride || o.padding) bad("Stride, Padding", "do not apply to 'global' pooling");
    p.g = poolkit::global_geometry(in);
  } else {
    poolkit::RegularParams rp;
    rp.kernel = reversed(per_dim(poolsize, "poolsize", r, 1));
    rp.stride = o.stride ? reversed(per_dim(o.stride, "Stride", r, 1)) : std::vector<int64_t>(r, 1);
    rp.pad_lo.assign(r, 0);
    rp.pad_hi.assign(r, 0);
    if (o.padding && is_text(o.padding)) {
      if (text(o.padding, "Padding") != "same") bad("Padding", "must be numeric or 'same'");
      for (size_t a = 0; a < r; ++a) {  // out = ceil(in / stride), the odd cell after
        int64_t s = rp.stride[a], out = (in[a] + s - 1) / s;
        int64_t total = std::max<int64_t>(0, (out - 1) * s + rp.kernel[a] - in[a]);
        rp.pad_lo[a] = total / 2;
        rp.pad_hi[a] = total - total / 2;
      }
    } else if (o.padding) {
      if (mxGetM(o.padding) == 2 && mxGetN(o.padding) == r && mxGetNumberOfDimensions(o.padding) == 2) {
        std::vector<int64_t> v = int_values(o.padding, "Padding", 0);  // column-major [pre; post]
        for (size_t i = 0; i < r; ++i) rp.pad_lo[r - 1 - i] = v[2 * i], rp.pad_hi[r - 1 - i] = v[2 * i + 1];
      } else {
        rp.pad_lo = rp.pad_hi = reversed(per_dim(o.padding, "Padding", r, 0));
      }
    }
    try {
      p.g = poolkit::regular_geometry(in, rp);
    } catch (const poolkit::Error& e) {  // the core names its own arguments (kernel_size[0]...): say MATLAB's
      std::string what = e.what();
      bad("poolsize/Stride/Padding", what.substr(what.find(':') + 2) + " (axes counted from the last pooled dimension)");
    }
  }
  p.ydims = p.xdims;
  std::vector<int64_t> out = p.g.output_size();
  for (size_t a = 0; a < r; ++a) p.ydims[p.pooled[a]] = out[a];
  std::vector<int64_t> ystride(nd, 1);
  for (size_t i = 1; i < nd; ++i) ystride[i] = ystride[i - 1] * p.ydims[i - 1];
  for (size_t i = 0; i < nd; ++i) p.xnumel *= p.xdims[i], p.ynumel *= p.ydims[i];

  // Non-pooled dimensions of size > 1, in memory order, merged while each continues the one before in X and Y.
  std::vector<Group> groups;
  for (size_t i = 0; i < nd; ++i) {
    if (std::find(p.pooled.begin(), p.pooled.end(), int(i)) != p.pooled.end() || p.xdims[i] == 1) continue;
    if (!groups.empty() && p.xstride[i] == groups.back().xstride * groups.back().size &&
        ystride[i] == groups.back().ystride * groups.back().size) {
      groups.back().size *= p.xdims[i];
    } else {
      groups.push_back({p.xdims[i], p.xstride[i], ystride[i]});
    }
  }
  if (groups.size() > 2)
    bad("DataFormat", "'" + p.format + "': the dimensions that are not pooled must form at most two blocks in memory "
                      "(pooled dimensions between them would need a copy)");
  while (groups.size() < 2) groups.insert(groups.begin(), Group{1, p.xnumel, p.ynumel});
  // The core's C axis is the inner block, N the outer one.
  const Group &c = groups[0], &n = groups[1];
  std::vector<int64_t> xs{n.size, c.size}, xst{n.xstride, c.xstride}, ys{n.size, c.size}, yst{n.ystride, c.ystride};
  for (size_t a = 0; a < r; ++a) {
    xs.push_back(p.xdims[p.pooled[a]]), xst.push_back(p.xstride[p.pooled[a]]);
    ys.push_back(p.ydims[p.pooled[a]]), yst.push_back(ystride[p.pooled[a]]);
  }
  p.xshape = poolkit::Shape(xs), p.xst = poolkit::Strides(xst);
  p.yshape = poolkit::Shape(ys), p.yst = poolkit::Strides(yst);
  return p;
}

}  // namespace pkmex
