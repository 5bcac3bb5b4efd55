// The cell a flat index v names lies at offset r = v - flat(origin of the window) from the window's first tap; r
// is tap (jt, jh, jw) when it is jt pitches of the T axis plus jh of H plus jw of W, which one division per axis
// finds where each axis's pitch is beyond the reach of the axes inside it (LocalCodeJob). A tap counts when it is
// inside the input for that output (windows clipped by the border, adaptive windows shorter than the largest).
// Flat positions of in-range cells are distinct, so a hit is the very cell.
#include "argmax_local.hpp"

#include <cstdlib>
#include <memory>
#include <vector>

#include "common.hpp"
#include "kernels.hpp"

namespace poolkit::cpu {

namespace {

template <class U>
bool to_local(const Geometry& g3, const TensorView& flat, const TensorView& local, IndexForm form) {
  const Tables tab(g3);
  const AxisTable* ax[3] = {&tab.t, &tab.h, &tab.w};
  const int64_t H = tab.h.axis.in, W = tab.w.axis.in;
  const int64_t unit[3] = {H * W, W, 1};  // flat distance of one step along each axis
  LocalCodeJob job;
  job.form = form;
  int64_t reach = 0;  // of the axes inside the one at hand: the offset of their last tap
  for (int a = 2; a >= 0; --a) {
    const int64_t K = ax[a]->axis.kernel, pitch = ax[a]->axis.step() * unit[a];
    if (K > 1 && pitch <= reach) return false;  // taps that one division per axis cannot tell apart
    reach += (K - 1) * pitch;
    if (reach >= (int64_t(1) << 22)) return false;
    job.kernel[a] = int32_t(K), job.pitch[a] = int32_t(K > 1 ? pitch : 1), job.hi[a] = int32_t(K);
  }
  job.span = reach + 1;
  struct alignas(64) Table { uint8_t code[256]; };  // LocalCodeJob::table, made once for every run
  std::unique_ptr<Table> table;
  if (form == IndexForm::U8 && job.span < 255) {
    table = std::make_unique<Table>();
    for (int64_t r = 0; r < 256; ++r) {
      const int32_t code = r < job.span ? local_code(job, r) : -1;  // (below 255: at most 255 cells)
      table->code[r] = code < 0 ? 255 : uint8_t(code);
    }
    job.table = table->code;
  }
  std::vector<int64_t> base[3];  // per axis and output: the flat offset of the window's origin
  int64_t most = 0;              // the largest |base[0] + base[1] + base[2]| can be
  for (int i = 0; i < 3; ++i) {
    int64_t m = 0;
    for (int64_t o = 0; o < ax[i]->axis.out; ++o) {
      base[i].push_back(ax[i]->origin[size_t(o)] * unit[i]);
      m = std::max(m, std::abs(base[i].back()));
    }
    most += m;
  }
  if (most > (int64_t(1) << 30)) return false;  // (the kernel's offsets are 32-bit)
  // the taps of output o along axis a inside the input
  auto bound = [&](LocalCodeJob& j, int a, int64_t o) {
    j.lo[a] = int32_t(ax[a]->first[size_t(o)]), j.hi[a] = int32_t(ax[a]->last[size_t(o)]);
  };
  const View5 f(flat), l(local);
  const int64_t N = flat.shape[0], C = flat.shape[1], OT = tab.t.axis.out, OH = tab.h.axis.out, OW = tab.w.axis.out;
  // Channels-last rows are OW * C values in a row (an output's `lanes` are its C channels), channels-first rows
  // OW values vs apart (one lane an output). Where they are contiguous, outputs [lo, hi) of a row (whole windows
  // along W) go as one run of the kernel and every other output as a run of its own; strided rows one value at a
  // time. A task is a row, or a slice (n, c, ot) when every window is whole along H and W, its rows lie back to
  // back (c = 0 for channels-last: all channels) and its bases, one a value, stay in the cache (vgg's channels-last
  // slices of 401K values read theirs from L3: 1.17x slower than by rows).
  const int64_t lo = tab.w.full_begin, hi = tab.w.full_end;
  const bool last = C > 1 && f.s[1] == 1 && l.s[1] == 1 && f.s[4] == C && l.s[4] == C;
  const int64_t lanes = last ? C : 1, planes = last ? 1 : C, vs = f.s[4], os = l.s[4];
  const bool contiguous = last || (vs == 1 && os == 1);
  // Small channels-first planes (rows back to back) in one run each, as if every window were whole; then the
  // codes of the windows cut by the border are checked against a mask of the taps each has inside the input (a
  // run a row would cost more to set up than its few vectors, and a check of bounds in every vector as much).
  const int64_t outputs = OT * OH * OW, cells = int64_t(job.kernel[0]) * job.kernel[1] * job.kernel[2];
  if (!last && contiguous && f.s[3] == OW && l.s[3] == OW &&
      (OT == 1 || (f.s[2] == OH * OW && l.s[2] == OH * OW)) && outputs <= 16384 && cells <= 32) {
    std::vector<int32_t> base_p;
    std::vector<std::pair<int64_t, uint32_t>> cut;  // (output, its taps inside the input as bits of their codes)
    for (int64_t ot = 0; ot < OT; ++ot)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          base_p.push_back(int32_t(base[0][size_t(ot)] + base[1][size_t(oh)] + base[2][size_t(ow)]));
          uint32_t bits = 0;
          for (int64_t jt = tab.t.first[size_t(ot)]; jt < tab.t.last[size_t(ot)]; ++jt)
            for (int64_t jh = tab.h.first[size_t(oh)]; jh < tab.h.last[size_t(oh)]; ++jh)
              for (int64_t jw = tab.w.first[size_t(ow)]; jw < tab.w.last[size_t(ow)]; ++jw)
                bits |= uint32_t(1) << tab.local(jt, jh, jw);
          if (bits != uint32_t((uint64_t(1) << cells) - 1)) cut.emplace_back(int64_t(base_p.size()) - 1, bits);
        }
    return parallel_for(N * C, flat.numel(), [&](int64_t i) {
      LocalCodeJob j = job;
      U* out = l.at<U>(l.offset(i / C, i % C, 0, 0, 0));
      j.flat = f.at<int64_t>(f.offset(i / C, i % C, 0, 0, 0)), j.out = out;
      j.base = base_p.data(), j.count = outputs;
      bool ok = flat_to_local_codes(j);
      for (const auto& [o, bits] : cut) ok &= ((bits >> (uint32_t(out[o]) & 31)) & 1) != 0;  // (codes are below 32)
      return ok;
    });
  }
  bool slabs = contiguous && lo == 0 && hi == OW && f.s[3] == OW * lanes && l.s[3] == OW * lanes &&
               OH * OW * lanes <= 16384;
  for (int64_t oh = 0; oh < OH; ++oh)
    slabs &= tab.h.first[size_t(oh)] == 0 && tab.h.last[size_t(oh)] == tab.h.axis.kernel;
  std::vector<int32_t> base_w, base_hw;  // the bases of the values of a row, and of a slice
  for (int64_t ow = 0; ow < OW; ++ow) base_w.insert(base_w.end(), size_t(lanes), int32_t(base[2][size_t(ow)]));
  for (int64_t oh = 0; slabs && oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      base_hw.insert(base_hw.end(), size_t(lanes), int32_t(base[1][size_t(oh)] + base[2][size_t(ow)]));
  auto one_row = [&](int64_t n, int64_t c, int64_t ot, int64_t oh) {
    const int64_t* v = f.at<int64_t>(f.offset(n, c, ot, oh, 0));
    U* out = l.at<U>(l.offset(n, c, ot, oh, 0));
    LocalCodeJob j = job;
    bound(j, 0, ot), bound(j, 1, oh);
    j.row = base[0][size_t(ot)] + base[1][size_t(oh)];
    bool ok = true;
    for (int64_t ow = 0, end; ow < OW; ow = end) {
      end = ow == lo && hi > lo ? hi : ow + 1;
      bound(j, 2, ow);  // (whole from lo to hi)
      if (contiguous && (lanes > 1 || end > ow + 1)) {
        j.flat = v + ow * lanes, j.base = base_w.data() + ow * lanes, j.out = out + ow * lanes;
        j.count = (end - ow) * lanes;
        ok &= flat_to_local_codes(j);
        continue;
      }
      for (int64_t o = ow; o < end; ++o)  // (one output of one channel, or strided)
        for (int64_t k = 0; k < lanes; ++k) {
          const int32_t code = local_code(j, v[o * vs + k] - j.row - base[2][size_t(o)]);
          ok &= code >= 0;
          out[o * os + k] = U(code);
        }
    }
    return ok;
  };
  if (slabs)
    return parallel_for(N * planes * OT, flat.numel(), [&](int64_t i) {
      const int64_t ot = i % OT, c = (i / OT) % planes, n = i / (OT * planes);
      LocalCodeJob j = job;
      bound(j, 0, ot);
      j.flat = f.at<int64_t>(f.offset(n, c, ot, 0, 0)), j.out = l.at<U>(l.offset(n, c, ot, 0, 0));
      j.base = base_hw.data(), j.count = OH * OW * lanes, j.row = base[0][size_t(ot)];
      return flat_to_local_codes(j);
    });
  return parallel_for(N * planes * OT * OH, flat.numel(), [&](int64_t i) {
    const int64_t oh = i % OH, ot = (i / OH) % OT, c = (i / (OH * OT)) % planes, n = i / (OH * OT * planes);
    return one_row(n, c, ot, oh);
  });
}

}  // namespace

bool flat_argmax_to_local(const Geometry& g3, const TensorView& flat, const TensorView& local) {
  switch (local.dtype) {
    case DType::u8: return to_local<uint8_t>(g3, flat, local, IndexForm::U8);
    case DType::i16: return to_local<int16_t>(g3, flat, local, IndexForm::I16);
    case DType::i32: return to_local<int32_t>(g3, flat, local, IndexForm::I32);
    default: return false;
  }
}

}  // namespace poolkit::cpu
