#pragma once
// The median validate/ and the CLI report: of an even count, the mean of the
// middle two; of none, 0.

#include <algorithm>
#include <vector>

namespace ddpsim::validate {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace ddpsim::validate
