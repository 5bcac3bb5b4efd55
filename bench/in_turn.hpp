// Timing in turn for the standalone C++ bench programs: several kinds of call timed round after round, each round
// starting one kind further on (so that none always follows the same other), each timed call right after an
// untimed one of its own kind (this VM's memory pace moves within seconds), the first round not kept.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The sorted times in ms of each of `kinds` kinds of call over `rounds` kept rounds; call(kind) makes one. A call
// may return false to stop (a check failed): the times so far come back.
template <class F>
std::vector<std::vector<double>> times_in_turn(int kinds, int rounds, F&& call) {
  std::vector<std::vector<double>> ms(static_cast<size_t>(kinds));
  for (int rep = -1; rep < rounds; ++rep)
    for (int k0 = 0; k0 < kinds; ++k0) {
      const int k = (k0 + rep + 1) % kinds;
      if (!call(k)) return ms;
      const double t0 = now_seconds();
      if (!call(k)) return ms;
      if (rep >= 0) ms[size_t(k)].push_back(1e3 * (now_seconds() - t0));
    }
  for (auto& m : ms) std::sort(m.begin(), m.end());
  return ms;
}

// One line a kind of call: its median and fastest time, and the first kind's median over its own.
inline void print_against_first(const char* case_name, const std::vector<const char*>& names,
                                const std::vector<std::vector<double>>& ms) {
  for (size_t k = 0; k < names.size(); ++k) {
    const size_t mid = ms[k].size() / 2;
    std::printf("%-12s %-30s median %.2f ms  min %.2f ms  %s / this %.2f\n", case_name, names[k], ms[k][mid],
                ms[k][0], names[0], ms[0][mid] / ms[k][mid]);
  }
}

// The median times in ms of call() with a library switch `flag` true, then false, timed in turn over `rounds`;
// none where the two settings' outputs (the `bytes` at `out` after each call) differ (said on stdout).
template <class F>
std::optional<std::pair<double, double>> medians_both_ways(bool& flag, int rounds, const void* out, size_t bytes,
                                                           F&& call) {
  std::vector<char> first;
  bool same = true;
  const auto ms = times_in_turn(2, rounds, [&](int setting) {
    flag = setting == 0;
    call();
    const char* o = static_cast<const char*>(out);
    if (first.empty()) return first.assign(o, o + bytes), true;
    same = std::equal(first.begin(), first.end(), o);
    return same;
  });
  if (!same) return std::puts("the two settings' outputs differ"), std::nullopt;
  return std::make_pair(ms[0][ms[0].size() / 2], ms[1][ms[1].size() / 2]);
}
