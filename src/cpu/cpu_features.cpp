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

// AMD's family 19h (Zen 3, Zen 4) with AVX-512F: Zen 4.
bool detect_zen4() {
#if defined(__x86_64__) || defined(__i386__)
  if (!detect_amd()) return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);  // base + extended family
  if (family != 0x19 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b >> 16) & 1;  // CPUID.(EAX=7, ECX=0):EBX[16] AVX512F
#else
  return false;
#endif
}

}  // namespace

bool cpu_bf16_insn = detect_bf16_insn();
bool cpu_half_rows_direct = detect_amd();
bool cpu_group_prefetch = !detect_zen4();
bool cpu_row_prefetch_far = detect_zen4();

}  // namespace poolkit::cpu
