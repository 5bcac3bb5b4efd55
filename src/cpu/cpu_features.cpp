#include "cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace poolkit::cpu {
namespace {

bool detect_bf16_insn() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return (a >> 5) & 1;  // CPUID.(EAX=7, ECX=1):EAX[5] AVX512_BF16
#else
  return false;
#endif
}

bool detect_amd() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;  // "Auth" "enti" "cAMD"
#else
  return false;
#endif
}

}  // namespace

bool cpu_bf16_insn = detect_bf16_insn();
bool cpu_half_rows_direct = detect_amd();

}  // namespace poolkit::cpu
