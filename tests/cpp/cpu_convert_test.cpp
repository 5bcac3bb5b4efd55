// The SIMD 16-bit conversions of the fast path against dtype.hpp's scalar ones: every 16-bit pattern widened,
// and float32 patterns narrowed (a stride through all 2^32 of them plus the rounding and range boundaries).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cpu/convert.hpp"
#include "cpu/cpu_features.hpp"

namespace poolkit::test {
namespace {

template <class H>
void check_widen(DType dt) {
  std::vector<uint16_t> bits(65536 + 7);  // + 7: a scalar tail after the vectors
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = uint16_t(i);
  std::vector<float> got(bits.size());
  cpu::widen_to_f32(dt, bits.data(), got.data(), int64_t(bits.size()));
  for (size_t i = 0; i < bits.size(); ++i) {
    H h;
    h.bits = bits[i];
    float want = float(h);
    ASSERT_EQ(0, std::memcmp(&want, &got[i], 4)) << dtype_name(dt) << " pattern " << bits[i];
  }
}

template <class H>
void check_narrow(DType dt) {
  std::vector<uint32_t> pats;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) pats.push_back(uint32_t(u));
  // around every rounding boundary of the 16-bit formats near 1, their extremes, subnormals, infinities, NaN
  const uint32_t edges[] = {0x3f800000u, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x477fe000u,
                            0x477ff000u, 0x477fefffu, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u,
                            0xffffffffu, 0x00000001u, 0x80000000u, 0x0001ffffu, 0x3f808000u, 0x3f818000u};
  for (uint32_t e : edges)
    for (uint32_t d = 0; d < 40; ++d) pats.push_back(e - 20 + d), pats.push_back((e - 20 + d) ^ 0x80000000u);
  std::vector<float> src(pats.size());
  std::memcpy(src.data(), pats.data(), pats.size() * 4);
  std::vector<uint16_t> got(pats.size());
  cpu::narrow_from_f32(dt, src.data(), got.data(), int64_t(src.size()));
  for (size_t i = 0; i < src.size(); ++i)
    ASSERT_EQ(H(src[i]).bits, got[i]) << dtype_name(dt) << " float pattern " << std::hex << pats[i];
}

TEST(CpuConvert, WidenEveryPattern) {
  check_widen<bfloat16>(DType::bf16);
  check_widen<float16>(DType::f16);
}

// bfloat16 both by the AVX512_BF16 instruction (where this CPU has it) and by integer rounding.
TEST(CpuConvert, NarrowMatchesScalarRounding) {
  const bool has = cpu::cpu_bf16_insn;
  for (bool insn : {has, false}) {
    cpu::cpu_bf16_insn = insn;
    check_narrow<bfloat16>(DType::bf16);
  }
  cpu::cpu_bf16_insn = has;
  check_narrow<float16>(DType::f16);
}

}  // namespace
}  // namespace poolkit::test
