// Why the backward stores ordinarily into pages never written (see untouched_page in src/cpu/common.hpp): times
// a 128 MiB write into a fresh mapping by 64-byte ordinary stores and by streaming stores, in 4 KiB pages and in
// huge pages, 2 threads, median of 9 (each rep a new mapping). x86-64 with AVX-512, Linux.
//   g++ -O2 -march=native -fopenmp bench/fresh_page_stores.cpp -o /tmp/fresh && /tmp/fresh
#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  const size_t size = size_t(128) << 20, huge = size_t(2) << 20;
  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  for (int round = 0; round < 3; ++round)
    for (int pages = 0; pages < 2; ++pages)
      for (int stream = 0; stream < 2; ++stream) {
        std::vector<double> t;
        for (int rep = 0; rep < 9; ++rep) {
          void* raw = mmap(nullptr, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          if (raw == MAP_FAILED) return 1;
          char* dst = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + huge - 1) & ~(huge - 1));
          madvise(dst, size, pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
          const double t0 = now();
#pragma omp parallel num_threads(2)
          {
            const int th = omp_get_thread_num();
            const size_t lines = size / 64, begin = lines * th / 2 * 64, end = lines * (th + 1) / 2 * 64;
            const __m512 v = _mm512_set1_ps(1.0f + float(th));
            for (size_t i = begin; i < end; i += 64) {
              if (stream) _mm512_stream_ps(reinterpret_cast<float*>(dst + i), v);
              else _mm512_store_ps(reinterpret_cast<float*>(dst + i), v);
            }
            _mm_sfence();
          }
          t.push_back(now() - t0);
          munmap(raw, size + huge);
        }
        std::sort(t.begin(), t.end());
        std::printf("%s pages, %s stores: %.2f ms\n", pages ? "huge" : "4 KiB", stream ? "streaming" : "ordinary",
                    t[t.size() / 2] * 1e3);
      }
}
