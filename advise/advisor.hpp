#pragma once
// ddpsim advise: the configurations a scenario leaves open, each simulated,
// those that do not fit in memory dropped, the rest ranked by an objective,
// and the reasons the winner won (docs/advise.md).
//
// The axes: the program (DDP, or FSDP with each sharding strategy that
// applies), DDP's bucket_cap_mb, gradient accumulation (keeping the global
// batch in a range), the world size, activation checkpointing (none, or the
// model's blocks) and, with a failures section, the checkpoint interval
// (the scenario's or Daly's optimum, whichever the simulated failures leave
// more goodput with). Every configuration is a variant of the scenario's
// file, loaded and validated as that file would be (loader/variant.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/partition.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::advisor {

/// What the ranking minimises or maximises.
enum class Objective : std::uint8_t {
  kStep,        ///< optimizer step time, lower is better
  kThroughput,  ///< samples a second, higher is better
  kGpuHours,    ///< GPU-hours a million samples, lower is better
  kGoodput,     ///< samples a second times the goodput failures leave (a failures section), higher is better
};
std::string_view to_string(Objective o);
std::optional<Objective> parse_objective(std::string_view name);

/// The search split over processes (mpirun, srun): each process simulates
/// its share of the sweeps (every count-th); the advice on index 0 is what
/// one process gives, byte for byte; elsewhere it is empty.
using Partition = scenarios::Partition;

struct AdviseOptions {
  Objective objective = Objective::kThroughput;
  std::vector<int> world_sizes;                 ///< empty: the scenario's
  std::optional<std::int64_t> global_batch_min;  ///< with max: the range accumulation keeps the global batch in
  std::optional<std::int64_t> global_batch_max;
  int threads = 1;  ///< simulations at once; the advice is the same at any count
  /// Programs to try ("DDP", "FULL_SHARD", ...); empty: every one that applies.
  std::vector<std::string> programs;
  Partition partition;
};

/// The programs advise knows, PyTorch's names: DDP and FSDP's sharding strategies.
const std::vector<std::string>& known_programs();

/// One configuration: what differs from the scenario.
struct Configuration {
  std::string program;  ///< "DDP" or the FSDP sharding strategy, PyTorch's name
  double bucket_cap_mb = 25;  ///< DDP only
  /// DDP only: the communication hook, ddp.comm_hook's name ("powerSGD r4" with
  /// its rank); "allreduce" is DDP without one.
  std::string comm_hook = "allreduce";
  int accumulation = 1;
  int world_size = 1;
  bool checkpointing = false;  ///< activation checkpointing of the model's blocks
  std::optional<double> checkpoint_interval_min;  ///< with a failures section
  bool fsdp() const { return program != "DDP"; }
  /// "DDP cap 25 MiB, accum 1, W=8" and so on, the same text for the same configuration.
  std::string describe() const;
};

/// What the simulation of one configuration predicts.
struct Evaluated {
  Configuration config;
  std::int64_t global_batch = 0;
  std::optional<double> step_ms;  ///< none: it did not complete (out of memory, a hang)
  double samples_per_s = 0;
  double efficiency = 0;        ///< t1 / tW at this configuration's other settings
  double exposed_comm_ms = 0;   ///< rank 0's, per step
  std::int64_t peak_bytes = 0;  ///< predicted peak memory per GPU
  std::int64_t model_state_bytes = 0;  ///< parameters, gradients, optimizer states (and DDP's buckets)
  std::optional<double> goodput;       ///< with a failures section: useful / wall time
  bool fits = true;
  std::string outcome = "completed";  ///< or "hang", "crash" (out of memory among them)
  double objective = 0;  ///< in the objective's unit
};

struct Advice {
  bool complete = true;  ///< false on a process other than the partition's first: nothing to report
  std::string scenario;
  Objective objective = Objective::kThroughput;
  std::optional<std::int64_t> device_bytes;
  double scenario_cap_mb = 25;     ///< the scenario's (first) bucket_cap_mb, what a cap is compared with
  /// What the scenario itself asks for, which a near tie keeps (prefer()).
  Configuration scenario_config;
  /// Set when a near tie put a configuration other than the objective's best first: why.
  std::string near_tie;
  std::vector<std::string> axes;   ///< what was searched, a line each
  std::vector<Evaluated> ranked;   ///< those that fit and completed, best first
  std::vector<Evaluated> dropped;  ///< those that did not fit, least over first
  std::vector<std::string> reasons;  ///< why the first of `ranked` won, most decisive first
};

/// Searches `scenario_path`'s open configurations. Throws
/// scenarios::InputError for options the scenario cannot take (the goodput
/// objective without a failures section, a global batch range no
/// configuration reaches).
Advice advise(const std::string& scenario_path, const AdviseOptions& options);
/// advise on a scenario's text; `source` names it and anchors its relative paths.
Advice advise_text(const std::string& text, const std::string& source, const AdviseOptions& options);

/// Higher is better for this objective.
bool higher_is_better(Objective o);

/// Within this many percent of the best, configurations are a near tie: the
/// model's error cannot tell them apart.
inline constexpr double kNearTiePct = 1;

/// How much `c` asks a user to change, compared lexicographically (fewer is
/// preferred within a near tie): the settings that differ from the
/// scenario's, each weighed by what it costs a user (bucket cap 1; hook,
/// accumulation, checkpointing, another FSDP strategy 2; DDP to FSDP 4), then from PyTorch's defaults (bucket_cap_mb 25, no hook, no
/// accumulation, no checkpointing), then the program's complexity (FSDP
/// over DDP, a hook, activation checkpointing). World size is the user's
/// question, not a setting: left out.
std::array<int, 3> change_cost(const Configuration& c, const Configuration& scenario);

/// Within a near tie of the best (`a.ranked`, best first): the scenario's own
/// configuration goes first if it is there (nothing changed: a slower
/// configuration is never put first otherwise); between equal objectives the
/// one with the smaller change_cost. advice.near_tie says why.
void order_near_tie(Advice& a);

}  // namespace ddpsim::advisor
