#pragma once
// A scenario: one YAML file, loaded once into an immutable, validated value.
// Every key, its unit and its default: docs/scenario-format.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/ddp_job.hpp"
#include "models/fsdp.hpp"
#include "models/memory.hpp"
#include "models/restart.hpp"
#include "netsim/simgrid_options.hpp"
#include "loader/input_error.hpp"

namespace ddpsim::scenarios {

/// What a sweep runs: each bucket cap (the outer axis) at each world size.
/// A scenario's own axes are Scenario::sweep; validation sweeps others.
struct SweepAxes {
  std::vector<double> bucket_caps_mb = {25};  ///< ddp.bucket_cap_mb: a list is a second sweep axis
  std::vector<int> world_sizes;               ///< world_size: one row of results per entry, in file order
};

/// `job` with DDP's bucket cap set to `cap_mb` MiB, as torch does
/// (int(cap_mb * 2^20) bytes): the one way a cap of the axis enters a job.
/// A cap passed to DDP (the scenario gave one, or it is not DDP's default 25)
/// caps the first bucket too, as PyTorch 2.3+ does, unless ddp.first_bucket_mb pins it.
models::DdpJob with_cap(models::DdpJob job, double cap_mb);

/// The data section's DistributedSampler, when it names a dataset size.
struct SamplerSpec {
  std::int64_t dataset_size = 0;
  bool shuffle = true;
  bool drop_last = false;
  bool set_epoch = true;
  int epochs = 1;
};

/// The failures and checkpoint sections.
struct ResilienceSpec {
  std::optional<models::FailureSpec> failures;
  std::optional<models::CheckpointSpec> checkpoint;
  double restart_budget_min = 15;  ///< the seed's "restart under 15 minutes"
};

/// The training program a scenario runs (`parallelism`).
enum class Parallelism : std::uint8_t { kDdp, kFsdp };

/// What memory per rank is predicted from (docs/fsdp.md#memory).
struct MemorySpec {
  models::MemoryInputs inputs;               ///< optimizer, ddp.gradient_as_bucket_view
  std::optional<std::int64_t> device_bytes;  ///< device.memory_GB: none is no limit
};

struct Scenario {
  std::string name;               ///< `name`, or the file's stem
  std::string source;             ///< the path it was loaded from
  std::uint64_t seed = 0;
  SweepAxes sweep;                ///< the rows to run: the caps and the world sizes, in file order
  models::DdpJob job;             ///< the job of the first row: with_cap(job, sweep.bucket_caps_mb.front())
  std::string model_description;  ///< "preset resnet50, 25557032 parameters in 161 tensors"
  std::optional<SamplerSpec> sampler;
  ResilienceSpec resilience;
  Parallelism parallelism = Parallelism::kDdp;
  Location parallelism_at;                 ///< where `parallelism` is set, for errors about it
  std::optional<models::FsdpConfig> fsdp;  ///< the fsdp section, with parallelism fsdp
  Location fsdp_strategy_at;               ///< where fsdp.sharding_strategy is (or the fsdp section), for errors
  MemorySpec memory;
  std::string sha256;       ///< of the scenario's text
  std::string calibration;  ///< the calibration file applied, if any
  std::string calibration_sha256;
  std::optional<double> max_error_pct;  ///< validation.max_error_pct: ddpsim validate's threshold
  std::string engine = "analytic";      ///< "analytic" or "simgrid" (`engine`, or ddpsim run --engine)
  netsim::SimgridOptions simgrid;       ///< the simgrid section's settings
  /// collective.placeholder: the collective numbers were not measured (a calibration's collective clears it).
  bool collective_placeholder = false;
  std::string measured_on;  ///< model.measured_on: "cpu", "cuda", or "" (not said)
};

/// What a prediction of this scenario rests on that is not measured or does
/// not match: placeholder collective numbers, CPU-measured compute under a
/// cluster of GPUs. The table and the JSON print each beside the prediction.
std::vector<std::string> caveats(const Scenario& scenario);

/// Reads and validates a scenario file. Throws InputError on any problem.
Scenario load_scenario(const std::string& path);
/// Validates scenario text; `source` names it in error messages.
Scenario parse_scenario(std::string_view text, const std::string& source);
/// Throws InputError on the command line's `option` when `world_size` is
/// more ranks than the scenario's cluster holds (no cluster: no limit), as
/// the loader refuses a world_size of the file.
void check_fits_cluster(const Scenario& scenario, int world_size, const std::string& option);

/// Limits on a scenario file, so that hostile input fails fast and cleanly.
inline constexpr std::size_t kMaxScenarioBytes = 1 << 20;
inline constexpr std::size_t kMaxLineBytes = 4096;
inline constexpr int kMaxWorldSize = 1 << 20;

}  // namespace ddpsim::scenarios
