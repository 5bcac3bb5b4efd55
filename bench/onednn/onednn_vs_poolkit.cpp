// oneDNN's and poolkit's channels-last max forward in one process, calls in turn: the rows where bench/compare.py
// (which runs oneDNN as a program of its own, minutes apart from the other libraries on a machine whose pace
// moves) has put poolkit behind oneDNN. For each case (shared/BENCH_CASES.md: vgg, resnet-stem, pool3d in float32,
// half-bf16 = resnet-stem in bfloat16), four calls:
//   oneDNN inference   forward_inference (no workspace)      poolkit   max_pool_forward without an index
//   oneDNN training    forward_training (its 1-byte workspace) poolkit   with the compact uint8 argmax
//                                                             poolkit   with PyTorch's int64 flat indices
// Each timed call right after an untimed one of its kind, the calls of a round in turn, each round starting one
// further on; medians of 15 rounds. Outputs are checked equal (the max values; oneDNN's workspace is its own form).
// 2 threads (OpenMP for both). From the repository root, after a release build, with libdnnl-dev:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/onednn/onednn_vs_poolkit.cpp build/release/src/libpoolkit.a
//       -lhwy -ldnnl -o /tmp/onednn_vs_poolkit && /tmp/onednn_vs_poolkit [vgg|resnet-stem|pool3d|half-bf16]...
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"
#include "../max_cases.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int run(const MaxCase& c) {
  using dnnl::memory;
  const int r = int(c.shape.size()) - 2;
  const std::vector<int64_t> out = c.out_shape();
  const memory::dims src_dims(c.shape.begin(), c.shape.end()), dst_dims(out.begin(), out.end());
  const memory::dims K(r, c.k), S(r, c.s), PL(r, c.p);
  memory::dims PR(r);
  for (int d = 0; d < r; ++d) PR[d] = (out[2 + d] - 1) * c.s + c.k - c.shape[2 + d] - c.p;
  const auto type = c.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const auto tag = r == 3 ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
  const memory::desc src_md(src_dims, type, tag), dst_md(dst_dims, type, tag);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using fwd = dnnl::pooling_forward;
  const auto alg = dnnl::algorithm::pooling_max;
  const fwd::primitive_desc inf_pd(fwd::desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, S, K, PL, PR), eng);
  const fwd::primitive_desc train_pd(fwd::desc(dnnl::prop_kind::forward_training, alg, src_md, dst_md, S, K, PL, PR), eng);
  memory src(src_md, eng), dst(dst_md, eng), ws(train_pd.workspace_desc(), eng);
  const fwd inf(inf_pd), train(train_pd);

  // poolkit's views of the same input, its own outputs
  using namespace poolkit;
  const Shape xs(c.shape), ys(out);
  const size_t xn = size_t(xs.numel()), yn = size_t(ys.numel()), es = c.bf16 ? 2 : 4;
  auto* x = static_cast<unsigned char*>(src.get_data_handle());
  for (size_t i = 0; i < xn; ++i) {  // finite values, many ties
    const float v = float((i * 2654435761u) % 1000);
    if (c.bf16) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      const uint16_t b = uint16_t(u >> 16);  // (exact: small integers)
      std::memcpy(x + 2 * i, &b, 2);
    } else {
      std::memcpy(x + 4 * i, &v, 4);
    }
  }
  std::vector<unsigned char> y(yn * es), codes(yn);
  std::vector<int64_t> idx(yn);
  const DType dt = c.bf16 ? DType::bf16 : DType::f32;
  const TensorView xv(x, dt, xs, Layout::ChannelsLast), yv(y.data(), dt, ys, Layout::ChannelsLast);
  const TensorView cv(codes.data(), DType::u8, ys, Layout::ChannelsLast), iv(idx.data(), DType::i64, ys, Layout::ChannelsLast);
  const Geometry g = c.geometry();

  const char* names[5] = {"oneDNN inference", "poolkit no index", "oneDNN training (workspace)",
                          "poolkit uint8 argmax", "poolkit int64 indices"};
  const std::function<void()> calls[5] = {
      [&] { inf.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}), strm.wait(); },
      [&] { max_pool_forward(g, xv, yv, TensorView{}); },
      [&] { train.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, ws}}), strm.wait(); },
      [&] { max_pool_forward(g, xv, yv, cv); },
      [&] { max_pool_forward(g, xv, yv, iv); }};
  calls[1]();
  for (int v : {0, 2}) {  // oneDNN's two forwards against poolkit's values
    std::memset(dst.get_data_handle(), 0, yn * es);
    calls[v]();
    if (std::memcmp(dst.get_data_handle(), y.data(), yn * es) != 0) return std::printf("%s: outputs differ\n", c.name), 1;
  }
  std::vector<double> ms[5];
  for (int round = 0; round < 16; ++round)
    for (int v0 = 0; v0 < 5; ++v0) {
      const int v = (v0 + round) % 5;
      calls[v]();
      const double t0 = now();
      calls[v]();
      if (round > 0) ms[v].push_back(1e3 * (now() - t0));
    }
  for (auto& m : ms) std::sort(m.begin(), m.end());
  auto med = [&](int v) { return ms[v][ms[v].size() / 2]; };
  for (int v = 0; v < 5; ++v) std::printf("%-12s %-28s %7.2f ms\n", c.name, names[v], med(v));
  std::printf("%-12s poolkit vs oneDNN (its time over poolkit's): no index %.2fx, uint8 argmax %.2fx, int64 %.2fx "
              "(against training)\n", c.name, med(0) / med(1), med(2) / med(3), med(2) / med(4));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  omp_set_num_threads(2);
  poolkit::set_num_threads(2);
  return run_named_cases(argc, argv, {"vgg", "resnet-stem", "pool3d", "half-bf16"}, run);
}
