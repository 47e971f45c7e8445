#pragma once
// The owner of the calibration file: `ddpsim calibrate --out` writes it
// (to_yaml), a scenario's `calibration:` key and `--calibration` read it
// (apply_calibration). Its keys are declared in the schema
// (schema::calibration_keys(), docs/scenario-format.md); each value given
// replaces the scenario's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

/// What a calibration says, with the comments that say where each part came from.
struct CalibrationFile {
  std::vector<std::string> sources;  ///< the measured files it was fitted to

  struct Collective {
    std::vector<std::string> comments;  ///< the fit's quality, its notes
    std::optional<double> latency_us, bandwidth_GBps;  ///< absent when the sweeps cannot separate them
    double launch_overhead_us = 0;
    std::optional<double> bandwidth_scale;  ///< NCCL's model (ddpsim calibrate --nccl-tests)
    bool binomial = false;  ///< fitted as the binomial all-reduce (calibrate --algorithm binomial), not the ring
  };
  std::optional<Collective> collective;

  struct Layer {
    std::string name;
    std::vector<std::string> params;  ///< the model's parameter names, as the run named them
    double forward_ms = 0, backward_ms = 0;
  };
  struct Compute {
    std::vector<std::string> comments;
    std::optional<double> forward_ms, backward_ms;  ///< whole-model times, or
    std::vector<Layer> layers;                       ///< per-layer ones
    double optimizer_ms = 0;
    double load_ms = 0;  ///< data loading per step (the data section)
  };
  std::optional<Compute> compute;

  struct Straggler {
    std::vector<std::string> comments;
    double penalty_ms = 0;  ///< the log2 model's
  };
  std::optional<Straggler> straggler;

  struct Contention {
    std::vector<std::string> comments;
    double compute_slowdown = 0;
    std::optional<double> comm_slowdown;  ///< measured by `ddpsim_torch overlap` only
  };
  std::optional<Contention> contention;
};

/// The file's text. Numbers with six significant digits.
std::string to_yaml(const CalibrationFile& calibration);

/// Applies the calibration file at `path` to `scenario` (InputError naming the file).
void apply_calibration(Scenario& scenario, const std::string& path);
/// The same, from the file's text; `source` names it in errors and provenance.
void apply_calibration_text(Scenario& scenario, std::string_view text, const std::string& source);

}  // namespace ddpsim::scenarios
