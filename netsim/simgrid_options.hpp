#pragma once
// What a scenario says to the SimGrid engine (its `simgrid` section): the
// scenario loader's view of netsim, without the engine itself
// (netsim/simgrid_engine.hpp).

#include <string>
#include <utility>
#include <vector>

namespace ddpsim::netsim {

struct SimgridOptions {
  /// SimGrid configuration settings applied after ddpsim's own (CM02, no
  /// cross-traffic, TCP-gamma 0: an uncontended transfer costs exactly
  /// latency + bytes / bandwidth), e.g. {"network/model", "LV08"}.
  std::vector<std::pair<std::string, std::string>> config;
  /// Simulate each distinct collective once and reuse its time (exact: a
  /// collective always runs on an idle network). False re-simulates every one.
  bool memoize = true;
};

/// The settings users may change (run_with_simgrid refuses others).
inline const std::vector<std::string>& simgrid_settable() {
  static const std::vector<std::string> keys = {
      "network/model",          "network/TCP-gamma", "network/crosstraffic", "network/latency-factor",
      "network/bandwidth-factor", "network/weight-S",  "surf/precision",       "maxmin/precision"};
  return keys;
}

}  // namespace ddpsim::netsim
