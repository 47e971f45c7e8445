#pragma once
// The flight-recorder view of a broken run: the earliest collective that did
// not complete, what each rank issued there or did instead, who waits, who is
// missing, the culprit, and the fix.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_library.hpp"
#include "models/faults.hpp"
#include "sim/engine.hpp"

namespace ddpsim::models {

/// Where a rank is when a collective fails to complete.
enum class RankState : std::uint8_t {
  kIssued,     ///< it issued the collective and waits in it
  kCrashed,    ///< its process died
  kExited,     ///< its loop ended without issuing it
  kElsewhere,  ///< it is still running, somewhere else
};
/// "issued", "crashed", "exited", "elsewhere": the JSON's and the table's word.
std::string_view to_string(RankState state);

/// One rank at the failing collective.
struct RankAtFailure {
  int rank = 0;
  RankState state = RankState::kElsewhere;
  std::string op;         ///< what it issued there ("all_reduce bucket 0", "barrier after the loop")
  std::string collective; ///< all_reduce | broadcast | barrier
  std::int64_t bytes = 0;
  std::string dtype;      ///< of the buffer, when known
  int iteration = -1;
  int bucket = -1;
  std::string detail;     ///< what it does instead, or its error
};

struct FailureReport {
  std::optional<std::uint64_t> sequence;  ///< the earliest collective sequence number that did not complete
  std::vector<RankAtFailure> ranks;
  std::vector<int> waiting_ranks;  ///< issued the most common (op, bytes) there and are blocked
  std::vector<int> missing_ranks;  ///< all others
  int culprit_rank = -1;
  std::string reason;              ///< one line
  std::string fix;                 ///< what to change in the training script
  std::optional<double> detected_at_ms;
  std::string detection;           ///< how it was detected (watchdog, gloo error, never)
};

/// Same op and size paired across different work: both sides complete, and
/// rank's gradients of `iteration` are averaged with `with_rank`'s of `with_iteration`.
struct MisalignedPair {
  std::uint64_t sequence = 0;
  int rank = 0;
  std::string op;
  int iteration = 0;
  int with_rank = 0;
  std::string with_op;
  int with_iteration = 0;
};

/// What the analysis needs to know of each rank beyond the engine's summary.
struct RankStatus {
  int iterations_run = 0;       ///< loop iterations it started
  bool finished = false;        ///< left the loop (and passed its final barrier, if any)
  std::set<FaultType> faults;   ///< faults that fired on it
  int shadow_collectives = 0;   ///< Join: collectives issued for it after it ran out of data
  /// The first warning PyTorch prints on it, with the iteration it came in
  /// (FSDP's forward-order check after the first iteration); -1: none.
  int warning_iteration = -1;
  std::string warning;
  std::string link_down;  ///< when its link went down (fault: link_down), as a report says it; empty: never
};

/// The faults of `rank` that happen at a time rather than an iteration (a
/// crash with at_ms, a link going down), scheduled on the engine and noted
/// in the rank's status. Each program calls it once, before its first step.
void schedule_timed_faults(const std::vector<Fault>& faults, int rank, sim::Engine& engine, RankStatus& status);

/// An operation's name in reports, by label; empty: op_name's.
using OpNamer = std::function<std::string(const sim::OpLabel&)>;

struct FailureContext {
  Backend backend = Backend::kNccl;
  sim::Time watchdog;
  /// The dtype of a collective's buffer, by label ("" when it has none).
  std::function<std::string(const sim::OpLabel&)> dtype_of;
  OpNamer name_of;  ///< e.g. FSDP's units by module path
};

std::vector<MisalignedPair> misaligned_pairs(const sim::RunSummary& summary, const OpNamer& name_of = {});

/// None when every rank finished.
std::optional<FailureReport> analyse_failure(const sim::RunSummary& summary, const std::vector<RankStatus>& ranks,
                                             const FailureContext& context);

}  // namespace ddpsim::models
