#pragma once
// Internal to scenarios/: the readers of a model (a scenario's `model` and
// `device`, a preset, a calibration file's `model`) and of a straggler
// section, shared by the scenario loader and the calibration file's reader.

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/ddp_job.hpp"
#include "models/parameters.hpp"
#include "models/straggler.hpp"
#include "loader/yaml_section.hpp"
#include "sim/time.hpp"

namespace ddpsim::scenarios {

/// The straggler section; `worlds` bounds `rank`.
models::StragglerModel read_straggler(const Section& s, const std::vector<int>& worlds);

// Name -> parameter index, with "did you mean" for near misses.
class ParamIndex {
 public:
  explicit ParamIndex(const std::vector<models::Tensor>& params) : params_(params) {}
  int find(const Section& s, const std::string& name, const YAML::Node& where, const std::string& key_path) const {
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].name == name) return static_cast<int>(i);
    }
    std::string expected = "expected the name of a model parameter";
    std::size_t best_d = std::max<std::size_t>(2, name.size() / 4) + 1;
    std::string best;
    for (const auto& p : params_) {
      const std::size_t d = edit_distance(name, p.name);
      if (d < best_d) best = p.name, best_d = d;
    }
    if (!best.empty()) expected += fmt::format(" (did you mean '{}'?)", best);
    s.fail_node(where, key_path, expected);
  }
  std::vector<int> list(const Section& s, std::string_view key, bool distinct) const {
    std::vector<int> out;
    for (const auto& [name, node] : s.strings(key)) {
      const int i = find(s, name, node, s.path_of(key));
      if (distinct && std::find(out.begin(), out.end(), i) != out.end()) {
        s.fail_node(node, s.path_of(key), "expected each parameter once");
      }
      out.push_back(i);
    }
    return out;
  }

 private:
  const std::vector<models::Tensor>& params_;
};

// Milliseconds from a `<stem>_ms` or `<stem>_gflops` key (exactly one of them).
class ComputeTimes {
 public:
  explicit ComputeTimes(const Section& device) : device_(device) {}
  std::optional<sim::Time> read(const Section& s, std::string_view stem, bool required) {
    const std::string ms = std::string(stem) + "_ms", gf = std::string(stem) + "_gflops";
    if (s.has(ms) && s.has(gf)) s.fail(gf, fmt::format("give {} or {}, not both", ms, gf));
    if (s.has(ms)) return s.millis(ms, std::nullopt);
    if (s.has(gf)) {
      used_flops_ = true;
      const double gflops = s.number(gf, std::nullopt);
      return sim::Time::from_ms(gflops / throughput(), "a time from GFLOP (model.*_gflops over device.peak_tflops x efficiency)");
    }
    if (required) s.missing(ms, fmt::format("milliseconds (or {} with a device section)", gf));
    return std::nullopt;
  }
  bool used_flops() const { return used_flops_; }

 private:
  // GFLOP / (TFLOP/s) = 1 ms.
  double throughput() {
    if (!tflops_) {
      if (!device_.has("peak_tflops")) device_.missing("peak_tflops", "the device's peak TFLOP/s, to turn GFLOP into time");
      tflops_ = device_.number("peak_tflops", std::nullopt) *
                device_.number("efficiency", std::nullopt);
    }
    return *tflops_;
  }
  const Section& device_;
  std::optional<double> tflops_;
  bool used_flops_ = false;
};

/// Per-layer (`layers`) or whole-model compute times of `model` into `spec`.
void read_compute(const Section& model, ComputeTimes& times, models::ModelSpec& spec);
/// The scenario's model and device sections; `description` says what was read.
models::ModelSpec read_model(const Section& top, std::string& description);

}  // namespace ddpsim::scenarios
