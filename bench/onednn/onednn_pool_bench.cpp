// oneDNN's pooling on one case of shared/BENCH_CASES.md: the peer that bench/compare.py runs as a separate process.
//
// Times three calls of oneDNN (Debian's libdnnl-dev, oneDNN 2.x C++ API) after a warm-up run each, and prints one
// JSON line with their median milliseconds:
//   forward_inference_ms  forward_inference primitive (max: no workspace; avg)
//   forward_training_ms   forward_training primitive (max: also writes its workspace, oneDNN's argmax; avg: as
//                         inference, no workspace)
//   backward_ms           backward_data primitive (max: from the workspace of the training forward; avg)
// Every memory object (src, dst, workspace, diff_dst, diff_src) is made and filled once before any timing. The results
// of each call are checked against a plain loop in this program ("check": "ok" or what differs).
//
// usage: onednn_pool_bench --shape N,C,H,W[,..] --alg max|avg_include|avg_exclude --layout nchw|nhwc
//            (--kernel K --stride S --pad P | --adaptive O) [--threads T] [--reps R] [--dtype f32|bf16|f16]
// --dtype: the data type of src, dst and their gradients (default f32); where oneDNN has no implementation of the
// pooling for it on this CPU, the line is {"na": "..."}.
// --layout nhwc means channels-last (format_tag nhwc, or ndhwc for a 5-d shape). --adaptive O is adaptive pooling to
// O per spatial dimension, run as the oneDNN pooling that is exactly it where there is one (O = 1: kernel = input,
// stride 1; input divisible by O: kernel = stride = input / O); otherwise (e.g. 13 -> 7, uneven windows) oneDNN has no
// such operator and the line is {"na": "..."}. Threads: OpenMP (Debian's oneDNN uses the OpenMP runtime), set with
// omp_set_num_threads(T); without --threads, OMP_NUM_THREADS decides.
//
// build: g++ -O2 -std=c++17 -fopenmp bench/onednn/onednn_pool_bench.cpp -o onednn_pool_bench -ldnnl
// (bench/compare.py does this itself into build/onednn-bench/ when libdnnl-dev is installed)
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr,
                 "error: %s\nusage: onednn_pool_bench --shape N,C,H,W[,..] --alg max|avg_include|avg_exclude "
                 "--layout nchw|nhwc (--kernel K --stride S --pad P | --adaptive O) [--threads T] [--reps R] "
                 "[--dtype f32|bf16|f16]\n",
                 why);
    std::exit(2);
}

std::vector<long> parse_list(const std::string &s) {
    std::vector<long> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) v.push_back(std::stol(item));
    return v;
}

std::string json_escape(const std::string &s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) o += c;
    }
    return o;
}

// Median milliseconds of fn() after one warm-up call: at most reps timed calls, fewer once 5 s have gone (as
// bench/compare.py's median_seconds does).
template <class F>
double median_ms(F &&fn, int reps) {
    using clk = std::chrono::steady_clock;
    fn();
    std::vector<double> t;
    const auto start = clk::now();
    for (int i = 0; i < reps; ++i) {
        const auto t0 = clk::now();
        fn();
        t.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
        if (std::chrono::duration<double>(clk::now() - start).count() > 5) break;
    }
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

// Elements of a oneDNN buffer of type f32, bf16 or f16 as float (16-bit: round to nearest even on the way in).
struct Cells {
    void *p;
    dt type;
    float get(long i) const {
        if (type == dt::f32) return static_cast<const float *>(p)[i];
        const uint16_t b = static_cast<const uint16_t *>(p)[i];
        if (type == dt::f16) return static_cast<float>(reinterpret_cast<const _Float16 &>(b));
        const uint32_t u = uint32_t(b) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    void set(long i, float v) const {
        if (type == dt::f32) {
            static_cast<float *>(p)[i] = v;
        } else if (type == dt::f16) {
            const _Float16 h = static_cast<_Float16>(v);
            std::memcpy(static_cast<uint16_t *>(p) + i, &h, 2);
        } else {
            uint32_t u;
            std::memcpy(&u, &v, 4);
            const uint16_t b = std::isnan(v) ? uint16_t(0x7fc0) : uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
            static_cast<uint16_t *>(p)[i] = b;
        }
    }
};

// Logical (n, c, spatial...) -> element offset in the plain layout (channels-last or not).
struct Layout {
    std::vector<long> dims;  // N, C, spatial
    bool cl;
    long offset(long n, long c, const long *sp) const {
        const int r = static_cast<int>(dims.size()) - 2;
        long s = 0;
        for (int i = 0; i < r; ++i) s = s * dims[2 + i] + sp[i];
        const long plane = count() / (dims[0] * dims[1]);
        return cl ? (n * plane + s) * dims[1] + c : (n * dims[1] + c) * plane + s;
    }
    long count() const {
        long p = 1;
        for (long d : dims) p *= d;
        return p;
    }
};

// The reference: y (and dx from dy) by plain loops over every output and its window.
struct Reference {
    const Layout &in, &out;
    std::vector<long> k, s, p;
    bool is_max, include_pad;

    template <class F>  // f(offset of y, list of input offsets in the window, divisor)
    void each_window(F &&f) const {
        const int r = static_cast<int>(in.dims.size()) - 2;
        std::vector<long> o(r, 0), i(r), offs;
        const long planes = in.dims[0] * in.dims[1], oplane = out.count() / planes;
        for (long nc = 0; nc < planes; ++nc) {
            const long n = nc / in.dims[1], c = nc % in.dims[1];
            for (long q = 0; q < oplane; ++q) {
                long rem = q;
                for (int d = r - 1; d >= 0; --d) o[d] = rem % out.dims[2 + d], rem /= out.dims[2 + d];
                offs.clear();
                long window = 1;  // include-padding divisor: the whole kernel (no ceil mode here)
                for (int d = 0; d < r; ++d) window *= k[d];
                std::vector<long> t(r, 0);
                for (;;) {  // every tap of the window
                    bool inside = true;
                    for (int d = 0; d < r; ++d) {
                        i[d] = o[d] * s[d] - p[d] + t[d];
                        inside = inside && i[d] >= 0 && i[d] < in.dims[2 + d];
                    }
                    if (inside) offs.push_back(in.offset(n, c, i.data()));
                    int d = r - 1;
                    while (d >= 0 && ++t[d] == k[d]) t[d--] = 0;
                    if (d < 0) break;
                }
                f(out.offset(n, c, o.data()), offs, include_pad ? window : static_cast<long>(offs.size()));
            }
        }
    }
};

}  // namespace

int main(int argc, char **argv) {
    std::vector<long> shape;
    long kernel = -1, stride = -1, pad = 0, adaptive = -1;
    std::string alg_name, layout = "nchw", dtype_name = "f32";
    int threads = 0, reps = 5;
    for (int a = 1; a < argc; ++a) {
        const std::string opt = argv[a];
        if (a + 1 >= argc) usage(("missing value after " + opt).c_str());
        const std::string v = argv[++a];
        if (opt == "--shape") shape = parse_list(v);
        else if (opt == "--kernel") kernel = std::stol(v);
        else if (opt == "--stride") stride = std::stol(v);
        else if (opt == "--pad") pad = std::stol(v);
        else if (opt == "--adaptive") adaptive = std::stol(v);
        else if (opt == "--alg") alg_name = v;
        else if (opt == "--layout") layout = v;
        else if (opt == "--threads") threads = std::stoi(v);
        else if (opt == "--reps") reps = std::stoi(v);
        else if (opt == "--dtype") dtype_name = v;
        else usage(("unknown option " + opt).c_str());
    }
    if (shape.size() < 3 || shape.size() > 5) usage("--shape needs N,C and 1 to 3 spatial sizes");
    if (layout != "nchw" && layout != "nhwc") usage("--layout is nchw or nhwc");
    const bool is_max = alg_name == "max";
    if (!is_max && alg_name != "avg_include" && alg_name != "avg_exclude")
        usage("--alg is max, avg_include or avg_exclude");
    if (reps < 1) usage("--reps must be at least 1");
    if (dtype_name != "f32" && dtype_name != "bf16" && dtype_name != "f16") usage("--dtype is f32, bf16 or f16");
    const dt type = dtype_name == "f32" ? dt::f32 : dtype_name == "bf16" ? dt::bf16 : dt::f16;
    const int r = static_cast<int>(shape.size()) - 2;

    std::vector<long> K(r), S(r), PL(r, 0), PR(r, 0), out_dims = shape;
    for (int d = 0; d < r; ++d) {
        const long in = shape[2 + d];
        if (adaptive > 0) {  // adaptive pooling to `adaptive`: exactly a plain pooling only for even windows
            if (adaptive == 1) K[d] = in, S[d] = 1;
            else if (in % adaptive == 0) K[d] = S[d] = in / adaptive;
            else {
                std::printf("{\"na\": \"adaptive %ld -> %ld has uneven windows; oneDNN has no adaptive pooling\"}\n",
                            in, adaptive);
                return 0;
            }
        } else {
            if (kernel < 1 || stride < 1) usage("--kernel and --stride (or --adaptive) are needed");
            K[d] = kernel, S[d] = stride, PL[d] = pad;
        }
        out_dims[2 + d] = (in + 2 * PL[d] - K[d]) / S[d] + 1;  // floor mode, as torch with ceil_mode=False
        PR[d] = (out_dims[2 + d] - 1) * S[d] + K[d] - in - PL[d];  // what oneDNN needs for that output size
    }
    if (threads > 0) omp_set_num_threads(threads);

    const dnnl::algorithm alg = is_max                      ? dnnl::algorithm::pooling_max
                                : alg_name == "avg_include" ? dnnl::algorithm::pooling_avg_include_padding
                                                            : dnnl::algorithm::pooling_avg_exclude_padding;
    const bool cl = layout == "nhwc";
    const tag ft = r == 1 ? (cl ? tag::nwc : tag::ncw) : r == 2 ? (cl ? tag::nhwc : tag::nchw)
                                                                : (cl ? tag::ndhwc : tag::ncdhw);
    const memory::dims src_dims(shape.begin(), shape.end()), dst_dims(out_dims.begin(), out_dims.end());
    const memory::desc src_md(src_dims, type, ft), dst_md(dst_dims, type, ft);
    const memory::dims mK(K.begin(), K.end()), mS(S.begin(), S.end()), mPL(PL.begin(), PL.end()),
        mPR(PR.begin(), PR.end());

    try {
        dnnl::engine eng(dnnl::engine::kind::cpu, 0);
        dnnl::stream strm(eng);
        using fwd = dnnl::pooling_forward;
        using bwd = dnnl::pooling_backward;
        fwd::primitive_desc inf_pd, train_pd;
        bwd::primitive_desc bwd_pd;
        try {
            inf_pd = fwd::primitive_desc(
                fwd::desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, mS, mK, mPL, mPR), eng);
            train_pd = fwd::primitive_desc(
                fwd::desc(dnnl::prop_kind::forward_training, alg, src_md, dst_md, mS, mK, mPL, mPR), eng);
            bwd_pd = bwd::primitive_desc(bwd::desc(alg, src_md, dst_md, mS, mK, mPL, mPR), eng, train_pd);
        } catch (const dnnl::error &e) {
            if (e.status != dnnl_unimplemented) throw;
            std::printf("{\"na\": \"oneDNN has no %s pooling of %s on this CPU\"}\n", alg_name.c_str(),
                        dtype_name.c_str());
            return 0;
        }
        const memory::desc ws_md = train_pd.workspace_desc();

        // every buffer once, filled before timing (src and diff_dst uniform in [0, 1), as torch.rand)
        memory src(src_md, eng), dst(dst_md, eng), ddst(dst_md, eng), dsrc(src_md, eng);
        memory ws = ws_md.get_size() ? memory(ws_md, eng) : memory();
        const long nsrc = Layout{shape, cl}.count(), ndst = Layout{out_dims, cl}.count();
        const Cells X{src.get_data_handle(), type}, Y{dst.get_data_handle(), type}, DY{ddst.get_data_handle(), type},
            DX{dsrc.get_data_handle(), type};
        std::mt19937 gen(1);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        std::vector<float> x(nsrc), dy(ndst);  // the values as stored (16-bit: rounded)
        for (long i = 0; i < nsrc; ++i) X.set(i, u(gen)), x[i] = X.get(i);
        for (long i = 0; i < ndst; ++i) DY.set(i, u(gen)), dy[i] = DY.get(i);
        for (long i = 0; i < ndst; ++i) Y.set(i, std::numeric_limits<float>::quiet_NaN());
        for (long i = 0; i < nsrc; ++i) DX.set(i, std::numeric_limits<float>::quiet_NaN());
        if (ws_md.get_size()) std::memset(ws.get_data_handle(), 0xff, ws_md.get_size());

        fwd inf(inf_pd), train(train_pd);
        bwd back(bwd_pd);
        std::unordered_map<int, memory> inf_args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
        std::unordered_map<int, memory> train_args = inf_args, bwd_args{{DNNL_ARG_DIFF_DST, ddst},
                                                                       {DNNL_ARG_DIFF_SRC, dsrc}};
        if (ws_md.get_size()) train_args[DNNL_ARG_WORKSPACE] = ws, bwd_args[DNNL_ARG_WORKSPACE] = ws;

        const double t_inf = median_ms([&] { inf.execute(strm, inf_args); strm.wait(); }, reps);
        const double t_train = median_ms([&] { train.execute(strm, train_args); strm.wait(); }, reps);
        const double t_bwd = median_ms([&] { back.execute(strm, bwd_args); strm.wait(); }, reps);

        // check dst and diff_src against plain loops (max: the gradient goes to the first maximum of each window;
        // 16-bit: within two units in the last place of the type, for sums that round at another point)
        const float tol = type == dt::f32 ? 1e-5f : type == dt::bf16 ? 0x1p-6f : 0x1p-9f;
        const Layout lin{shape, cl}, lout{out_dims, cl};
        const Reference ref{lin, lout, K, S, PL, is_max, alg_name == "avg_include"};
        std::vector<float> want_dx(nsrc, 0.f);
        long bad_y = 0, bad_dx = 0;
        ref.each_window([&](long yo, const std::vector<long> &offs, long div) {
            float want;
            if (is_max) {
                long arg = offs.empty() ? -1 : offs[0];
                for (long o : offs) if (x[o] > x[arg]) arg = o;
                want = arg < 0 ? -std::numeric_limits<float>::infinity() : x[arg];
                if (arg >= 0) want_dx[arg] += dy[yo];
                if (!(Y.get(yo) == want)) ++bad_y;
            } else {
                double sum = 0;
                for (long o : offs) sum += x[o], want_dx[o] += dy[yo] / static_cast<float>(div);
                want = static_cast<float>(sum / div);
                if (!(std::fabs(Y.get(yo) - want) <= tol * std::fabs(want) + tol / 10)) ++bad_y;
            }
        });
        for (long i = 0; i < nsrc; ++i)
            if (!(std::fabs(DX.get(i) - want_dx[i]) <= 10 * tol * std::fabs(want_dx[i]) + tol)) ++bad_dx;
        std::string check = "ok";
        if (bad_y || bad_dx)
            check = std::to_string(bad_y) + " of " + std::to_string(ndst) + " dst and " + std::to_string(bad_dx) +
                    " of " + std::to_string(nsrc) + " diff_src differ from plain loops";

        const dnnl::version_t *v = dnnl::version();
        std::printf("{\"onednn\": \"%d.%d.%d\", \"dtype\": \"%s\", \"threads\": %d, \"reps\": %d, \"kernel\": [",
                    v->major, v->minor, v->patch, dtype_name.c_str(), omp_get_max_threads(), reps);
        for (int d = 0; d < r; ++d) std::printf("%s%ld", d ? ", " : "", K[d]);
        std::printf("], \"stride\": [");
        for (int d = 0; d < r; ++d) std::printf("%s%ld", d ? ", " : "", S[d]);
        std::printf("], \"padding_l\": [");
        for (int d = 0; d < r; ++d) std::printf("%s%ld", d ? ", " : "", PL[d]);
        std::printf("], \"padding_r\": [");
        for (int d = 0; d < r; ++d) std::printf("%s%ld", d ? ", " : "", PR[d]);
        std::printf("], \"forward_inference_ms\": %.4f, \"forward_training_ms\": %.4f, \"backward_ms\": %.4f, "
                    "\"src_bytes\": %zu, \"dst_bytes\": %zu, \"workspace_bytes\": %zu, "
                    "\"impl\": {\"forward_inference\": \"%s\", \"forward_training\": \"%s\", \"backward\": \"%s\"}, "
                    "\"check\": \"%s\"}\n",
                    t_inf, t_train, t_bwd, src_md.get_size(), dst_md.get_size(), ws_md.get_size(),
                    json_escape(inf_pd.impl_info_str()).c_str(), json_escape(train_pd.impl_info_str()).c_str(),
                    json_escape(bwd_pd.impl_info_str()).c_str(), json_escape(check).c_str());
    } catch (const dnnl::error &e) {
        std::printf("{\"error\": \"oneDNN: %s (status %d)\"}\n", json_escape(e.what()).c_str(),
                    static_cast<int>(e.status));
        return 1;
    }
    return 0;
}
