#pragma once
// The owner of ddpsim-real's measured-run JSON: one struct per file kind,
// its writer (ddpsim-real) and its reader (ddpsim validate, calibrate and
// ddpsim-real's audit and report). Nobody else reads these files by field
// name. Field meanings: docs/real-backend.md; the per-step fields use the
// simulator's per-rank names (docs/scenario-format.md#json-result-json), in
// wall-clock milliseconds.
//
// Two kinds of file:
//   PREFIX.rank<r>.json  a rank's log of `ddpsim-real train --json PREFIX`
//   SWEEP.json           `ddpsim-real allreduce-sweep --json SWEEP` (rank 0)
// Every version of ddpsim-real wrote `world_size` and per step `iteration`,
// `skipped` and `step_ms`; fields added later are optional here, and a
// reader that needs one asks for it with `need`, which names the field.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ddpsim::formats {

/// A measured-run file that cannot be used: `file`, the field (may be
/// empty) and what is wrong, in the words of what() (the file not included).
class FormatError : public std::runtime_error {
 public:
  FormatError(std::string file, std::string key, const std::string& what)
      : std::runtime_error(what), file_(std::move(file)), key_(std::move(key)) {}
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }

 private:
  std::string file_, key_;
};

/// One training iteration of one rank.
struct MeasuredStep {
  int iteration = 0;
  int epoch = 0;
  int examples = 0;       ///< this rank's batch
  bool skipped = false;   ///< backward skipped (fault, or the ranks' vote)
  double step_ms = 0;
  std::optional<double> data_ms, compute_ms, collective_ms, exposed_comm_ms;
  std::optional<double> forward_compute_ms, backward_compute_ms, backward_comm_ms, backward_overlap_ms, optimizer_ms;
  /// End of backward compute on the host's CLOCK_MONOTONIC (0 when skipped).
  std::optional<double> backward_end_clock_ms;
  std::vector<double> layer_forward_ms, layer_backward_ms;  ///< per layer, layers.0 first (CPU runs)
};

/// A layer of the measured model, in the order of a step's layer_forward_ms.
struct MeasuredLayer {
  std::string name;                 ///< "layers.0"
  std::vector<std::string> params;  ///< its parameters' names, as the model's named_parameters()
};

struct MeasuredEpoch {
  int epoch = 0;
  std::vector<std::int64_t> ids;  ///< in the order the rank consumed them
};

/// PREFIX.rank<r>.json.
struct RankLog {
  std::string file;  ///< where it was read from (not written)
  int rank = 0;
  int world_size = 1;
  std::string host, ddpsim_version, git_commit, device, transport;
  /// The emulated network the run had (`network`: its shaping check, each link's measured rate,
  /// docs/emulated-network.md) as compact JSON; empty for a run without one.
  std::string network;
  /// DDP's communication hook the run registered (`comm_hook.name`: "fp16_compress", "powerSGD", ...);
  /// empty: none (allreduce).
  std::string comm_hook;
  struct Sizes {
    std::string widths;
    std::int64_t parameters = 0, gradient_bytes = 0, dataset_size = 0;
    std::vector<std::int64_t> bucket_bytes;  ///< DDP's buckets (empty under FSDP)
    std::vector<std::int64_t> unit_bytes;    ///< FSDP's units, padded flat parameters (absent under DDP)
  } sizes;
  /// "ddp" (also when absent), "full_shard" or "shard_grad_op".
  std::string parallelism = "ddp";
  /// FSDP: the most bytes of tensors the rank held at once (-1, or absent: not counted).
  std::int64_t peak_memory_bytes = -1;
  std::vector<MeasuredLayer> layers;  ///< with per-layer times only (CPU runs); absent before they were written
  /// The order DDP saw gradients become ready, as parameter names (ddpsim_torch measure:
  /// the Reducer's prev_iteration_grad_ready_order_indices); empty when not recorded.
  std::vector<std::string> gradient_ready_order;
  int batch_size = 0;
  std::int64_t resumed_from_step = -1;
  std::vector<MeasuredEpoch> epochs;
  std::vector<MeasuredStep> steps;

  /// The value of an optional field of step `i`; FormatError naming it if absent.
  double need(const std::optional<double> MeasuredStep::*field, std::string_view name, std::size_t i) const;
};

/// One size of a collective sweep (nccl-tests' algbw and busbw).
struct SweepRow {
  std::int64_t bytes = 0;
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

/// SWEEP.json.
struct CollectiveSweep {
  std::string file;
  std::string transport, host, ddpsim_version, git_commit;
  std::string op = "all_reduce";  ///< nccl-tests' name of the collective swept (`op`; absent: all_reduce)
  int world_size = 1;
  std::vector<SweepRow> rows;
  std::string network;  ///< as RankLog::network
};

/// PREFIX.rank<r>.json.
std::string rank_log_path(const std::string& prefix, int rank);
/// The file's text, byte for byte as ddpsim-real writes it (ends with a newline).
std::string to_json(const RankLog& log);
std::string to_json(const CollectiveSweep& sweep);

/// Either kind of file, told apart by its `sweep` or `steps` array. Throws
/// FormatError: the file unreadable, not JSON, neither kind, or a field missing or mistyped.
std::variant<RankLog, CollectiveSweep> read_measured_file(const std::string& path);
/// A rank's log; FormatError if `path` holds anything else.
RankLog read_rank_log(const std::string& path);
/// Every rank's log of a run: PREFIX.rank<r>.json for r below rank 0's world_size.
std::vector<RankLog> read_run(const std::string& prefix);

}  // namespace ddpsim::formats
