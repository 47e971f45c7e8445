#pragma once
// Scenario texts the scenarios/ unit tests share.

#include <stdexcept>
#include <string>

#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::scenarios::testing {

/// `text` with the first `from` replaced by `to` (which must be there).
inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos) throw std::logic_error("the scenario text has no '" + from + "'");
  return text.replace(pos, from.size(), to);
}

/// The located error `text` (as s.yaml) is refused with; "" if it loads.
inline std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// W = 2 on a 10 GB/s, 5 us collective; no model (kSmallParams is one).
inline const std::string kSmallBase = R"(world_size: 2
collective: {latency_us: 5, bandwidth_GBps: 10}
)";
/// A model section of three tensors by name and shape (one bfloat16), times left to add.
inline const std::string kSmallParams = R"(model:
  parameters:
    - {name: w1, shape: [4, 4]}
    - {name: b1, shape: [4], dtype: bfloat16}
    - {name: w2, shape: [2, 4]}
)";

/// Two layers of two tensors each (4x2 + 4, 1x4 + 1 elements), per-layer times, W = 2.
inline const std::string kLayered = R"(world_size: 2
model:
  parameters:
    - {name: layers.0.weight, shape: [4, 2]}
    - {name: layers.0.bias, shape: [4]}
    - {name: layers.1.weight, shape: [1, 4]}
    - {name: layers.1.bias, shape: [1]}
  layers:
    - {params: [layers.0.weight, layers.0.bias], forward_ms: 1, backward_ms: 2}
    - {params: [layers.1.weight, layers.1.bias], forward_ms: 1, backward_ms: 2}
collective:
  latency_us: 5
  bandwidth_GBps: 10
)";

}  // namespace ddpsim::scenarios::testing
