#pragma once
// Reading JSON fields for the file owners of formats/ (internal to it).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "formats/measured_run.hpp"

namespace ddpsim::formats::detail {

// An integer field within T's range: a JSON integer, or a number with an
// integral value (nlohmann's get<int> would convert 1e78 with undefined behaviour).
template <class T>
T integer(const nlohmann::json& v, const char* key) {
  constexpr double kExact = 9007199254740992.0;  // 2^53: every integer up to it is a double
  double d = 0;
  if (v.is_number_unsigned()) {
    d = static_cast<double>(std::min<std::uint64_t>(v.get<std::uint64_t>(), std::uint64_t{1} << 62));
  } else if (v.is_number_integer()) {
    d = static_cast<double>(v.get<std::int64_t>());
  } else if (v.is_number_float()) {
    d = v.get<double>();
  } else {
    throw FormatError("", key, fmt::format("expected an integer, got {}", v.type_name()));
  }
  const double lo = std::max(-kExact, static_cast<double>(std::numeric_limits<T>::min()));
  const double hi = std::min(kExact, static_cast<double>(std::numeric_limits<T>::max()));
  if (!(d >= lo && d <= hi) || d != std::floor(d)) {
    throw FormatError("", key, fmt::format("expected an integer from {:.0f} to {:.0f}", lo, hi));
  }
  return static_cast<T>(d);
}

}  // namespace ddpsim::formats::detail
