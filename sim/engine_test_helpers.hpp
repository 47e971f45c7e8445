#pragma once
// What the engine's tests share: an observer that keeps every record, a
// collective cost that ignores size, and milliseconds.

#include <vector>

#include "sim/engine.hpp"

namespace ddpsim::sim::testing {

struct Recorder final : Observer {
  std::vector<OpRecord> ops;
  void on_op(const OpRecord& r) override { ops.push_back(r); }
};

inline Time ms(double v) { return Time::from_ms(v); }

inline CollectiveCostFn fixed_cost(double cost_ms) {
  return [cost_ms](const Collective&, int) { return Time::from_ms(cost_ms); };
}

}  // namespace ddpsim::sim::testing
