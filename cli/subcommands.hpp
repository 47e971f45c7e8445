#pragma once
// The ddpsim subcommands that live in their own files: calibrate
// (cli/calibrate_cmd.cpp), collectives (cli/collectives_cmd.cpp), memory
// (cli/memory_cmd.cpp) and advise (cli/advise_cmd.cpp).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sweep/runner.hpp"
#include "sweep/work_estimate.hpp"

namespace ddpsim::cli {

struct CalibrateOptions {
  std::vector<std::string> measured;
  std::string out;
  int warmup = 2;
  std::string scenario;                     ///< fit contention.compute_slowdown to the multi-rank runs with it
  std::vector<std::string> measured_steps;  ///< W=MS: step times measured elsewhere, for the contention fit
  std::vector<std::string> nccl_tests;      ///< nccl-tests output: fit NCCL's model (the scenario's) to it
  std::string overlap;                      ///< ddpsim_torch overlap's JSON: the contention section, measured
  std::string check_scenario;               ///< with check_measured: the acceptance test
  std::vector<std::string> check_measured;
  std::optional<double> max_error_pct;
  std::string algorithm = "ring";  ///< the all-reduce's form the sweeps are fitted to: ring or binomial
};

/// ddpsim calibrate. Returns the exit code (3: the check rejected the fit).
int calibrate(const CalibrateOptions& o);

struct CollectivesOptions {
  std::string scenario;
  std::string op = "all_reduce";
  std::string sizes = "8:16G";
  int world_size = 0;  ///< 0: the scenario's largest
  std::string measured;  ///< nccl-tests output to compare with
  std::string json;
  bool tuning = false;   ///< also print NCCL's per-(algorithm, protocol) table, as NCCL_DEBUG_SUBSYS=TUNING does
  int groups = 0;        ///< > 0: this many process groups run the collective at once (SimGrid)
  std::string layout = "strided";  ///< the groups' ranks: strided {i, i+G, ...} or blocked
  std::optional<double> stagger_us;  ///< with groups: group i starts i x this after group 0, also priced
};

/// ddpsim collectives: the scenario's collective model as an nccl-tests table.
int collectives(const CollectivesOptions& o);
/// ddpsim collectives --groups G: G process groups' collectives at once on
/// the SimGrid engine, each size alone and together (cli/groups_cmd.cpp).
int collectives_together(const CollectivesOptions& o);

struct MemoryOptions {
  std::string scenario;
  int world_size = 0;  ///< 0: each of the scenario's
  std::string json;
};

/// ddpsim memory: memory per rank at the scenario's world sizes (cli/memory_cmd.cpp).
/// Returns 1 when some row does not fit device.memory_GB.
int memory(const MemoryOptions& o);

struct AdviseCliOptions {
  std::string scenario;
  std::string objective = "throughput";
  std::vector<int> world_sizes;  ///< empty: the scenario's
  std::string global_batch;      ///< "MIN:MAX", or empty
  std::string json;
  std::string plot;
  std::string html;  ///< --html: the page (advise/advise_html.hpp)
  int top = 20;
  int threads = 1;
  std::vector<std::string> programs;  ///< empty: all that apply
  scenarios::WorkBudget budget;       ///< each configuration's run, estimated as ddpsim run's
};

/// Entries a simulated flight recorder keeps a rank (TORCH_NCCL_TRACE_BUFFER_SIZE's suggested 2000).
inline constexpr std::size_t kFlightRecorderEntries = 2000;
/// ddpsim run --flight-recorder: a row that hung or crashed in a collective
/// run again with a flight recorder; its ranks' dumps, as files nccl_trace_rank_<r>.
scenarios::RecordFailed flight_recorder();
/// ddpsim run --flight-recorder DIR: the dumps flight_recorder() made of
/// each row, written to DIR/W<w> (DIR/cap<c>_W<w> in a bucket sweep).
/// Returns the folders.
std::vector<std::string> write_flight_dumps(const scenarios::SweepResult& result, const std::string& dir);
/// ddpsim explain DIR: the hang report from a folder of flight-recorder dumps (cli/flight_cmd.cpp).
int explain(const std::string& dir);

class MpiSession;
/// ddpsim advise (cli/advise_cmd.cpp), its search split over `mpi`'s
/// processes; rank 0 prints and writes. Returns 1 when nothing fits.
int advise(const AdviseCliOptions& o, const MpiSession& mpi);

}  // namespace ddpsim::cli
