// Timing in turn for the standalone C++ bench programs: several kinds of call timed round after round, each round
// starting one kind further on (so that none always follows the same other), each timed call right after an
// untimed one of its own kind (this VM's memory pace moves within seconds), the first round not kept.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
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
