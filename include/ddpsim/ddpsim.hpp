#pragma once
// ddpsim's public C++ API: the whole contract. Everything outside
// include/ddpsim is private and free to change (docs/architecture.md,
// "The public API"). Link libddpsim (cmake --install puts it in lib/, this
// header in include/ddpsim/) and compile as C++20.
//
//   ddpsim::Scenario s = ddpsim::load("scenarios/scaling_lab.yaml");
//   ddpsim::Sweep r = ddpsim::run(s);
//   for (const ddpsim::Run& run : r.runs()) std::printf("%d %f\n", run.world_size, run.step_ms.value_or(0));
//
// Same scenario and seed: the same results, byte for byte in every
// rendering, at any thread count. Errors: one type, ddpsim::Error, carrying
// the command line's exit code and where in the input the problem is.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpsim {

/// The classes of error, valued as the command line's exit codes (README.md#exit-codes).
enum class ErrorKind : int {
  kInternal = 1,      ///< a bug in ddpsim: no input should cause it
  kBadInput = 2,      ///< a scenario, an option, a file that cannot be read or written
  kMissedTarget = 3,  ///< a validation missed its threshold
  kDoesNotFit = 4,    ///< no configuration fits (advise), a row does not fit the device (memory)
  kCancelled = 130,   ///< the progress callback asked to stop
};

/// Every error the API throws. what() is the command line's message (after "ddpsim: error: ").
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string file = {}, int line = 0, int column = 0,
        std::string key = {});
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }
  /// Where the input is wrong, when known: the file (or the name given to a
  /// text), its 1-based line and column (0: unknown), and the key.
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key() const { return key_; }

 private:
  ErrorKind kind_;
  std::string file_;
  int line_ = 0;
  int column_ = 0;
  std::string key_;
};

struct ScenarioData;  // private

/// A validated scenario: its text (YAML; JSON is YAML too) and where it came
/// from, which names it in errors and anchors its relative paths
/// (calibration: FILE is read from the source's folder).
class Scenario {
 public:
  const std::string& name() const;
  const std::string& text() const;
  const std::string& source() const;
  std::vector<int> world_sizes() const;
  const std::string& engine() const;  ///< "analytic" or "simgrid"
  std::string program() const;        ///< "DDP", or FSDP's sharding strategy: "FULL_SHARD", ...
  /// The scenario as JSON (its YAML's structure; comments dropped).
  std::string to_json() const;

  /// Internal: the loaded scenario.
  explicit Scenario(std::shared_ptr<const ScenarioData> data) : data_(std::move(data)) {}
  const ScenarioData& data() const { return *data_; }

 private:
  std::shared_ptr<const ScenarioData> data_;
};

/// Reads and validates a scenario file. Throws Error (kBadInput) with the location.
Scenario load(const std::string& path);
/// Validates scenario text (YAML or JSON); `source` names it in errors, and
/// its folder anchors relative paths (default: the current directory).
Scenario load_text(const std::string& text, const std::string& source = "<text>");
/// JSON text as the equivalent block YAML, so that an error's line and
/// column point at a line of it (what load_text of a structure built in code shows).
std::string json_to_yaml(const std::string& json);

/// How far a sweep is; return false from the callback to stop it (Error kCancelled).
struct Progress {
  std::size_t done = 0;   ///< runs simulated
  std::size_t total = 0;  ///< runs in the sweep
};
using ProgressCallback = std::function<bool(const Progress&)>;

struct RunOptions {
  std::string engine;            ///< "analytic" or "simgrid" instead of the scenario's; empty: the scenario's
  std::vector<int> world_sizes;  ///< instead of the scenario's; empty: the scenario's
  int threads = 0;               ///< runs at once; 0: one per core. The results do not depend on it
  bool per_rank = false;         ///< simulate every rank even when all run the same program
  /// The work budget (ddpsim run's --max-rank-ops, --max-memory-gb): a run
  /// estimated past either is refused (kBadInput) before it starts.
  double max_rank_ops = 2e11;
  double max_memory_gb = 8;
  /// Called from the sweep's threads, one call at a time, after each run.
  ProgressCallback progress;
};

/// One row of a sweep: one bucket cap at one world size, as the JSON's runs[] has it.
struct Run {
  int world_size = 0;
  double bucket_cap_mb = 0;
  std::string outcome;                    ///< "completed", "hang", "crash"
  std::optional<double> step_ms;          ///< none unless it completed
  std::optional<double> baseline_step_ms; ///< W = 1 at this cap
  std::optional<double> speedup;          ///< W * t1 / tW
  std::optional<double> efficiency;       ///< t1 / tW
  double closed_form_step_ms = 0;         ///< the closed-form baseline at this W and cap
  std::int64_t global_batch = 0;
  double exposed_comm_ms = 0;             ///< rank 0's, per step
  std::int64_t peak_memory_bytes = 0;     ///< per rank
  std::optional<bool> fits;               ///< against device.memory_GB, when the scenario gives it
};

struct SweepData;  // private

/// A simulated sweep: its rows, and each rendering the command line writes.
class Sweep {
 public:
  const std::string& scenario() const;
  const std::string& engine() const;
  const std::vector<Run>& runs() const;
  std::string table() const;  ///< ddpsim run's scaling table
  std::string json() const;   ///< ddpsim run --json
  std::string csv() const;    ///< ddpsim run --csv
  std::string svg() const;    ///< ddpsim run --plot
  std::string html() const;   ///< ddpsim report --html (without a timeline)
  /// The page's section alone: its tables and chart, to embed in another page (a notebook's cell).
  std::string html_fragment() const;

  explicit Sweep(std::shared_ptr<const SweepData> data);

 private:
  std::shared_ptr<const SweepData> data_;
  std::vector<Run> runs_;
};

/// Simulates every world size (and bucket cap) of the scenario.
Sweep run(const Scenario& scenario, const RunOptions& options = {});

/// Memory per rank at one world size, by kind (bytes).
struct MemoryRow {
  int world_size = 0;
  std::int64_t parameters = 0, gradients = 0, optimizer_states = 0;
  std::int64_t buckets = 0;    ///< DDP's buckets and the comm hook's state
  std::int64_t unsharded = 0;  ///< FSDP's gathered units at the peak
  std::int64_t activations = 0;
  std::int64_t peak = 0;
  std::string peak_at;       ///< the phase (and unit) of the peak
  std::optional<bool> fits;  ///< against device.memory_GB, when given
};

struct MemoryReport {
  std::string scenario;
  std::string program;
  std::optional<std::int64_t> device_bytes;
  std::vector<MemoryRow> rows;
  std::string text;  ///< ddpsim memory's output
  std::string json;  ///< ddpsim memory --json
  bool all_fit() const;
};

/// Memory per rank at each of the scenario's world sizes, or at `world_size` alone.
MemoryReport memory(const Scenario& scenario, std::optional<int> world_size = std::nullopt);

/// One of DDP's gradient buckets: its parameters (names), bytes and dtype.
struct Bucket {
  std::int64_t bytes = 0;
  std::string dtype;
  std::vector<std::string> params;
};

/// DDP's buckets, as the Reducer builds them and rebuilds them after the first iteration.
struct BucketReport {
  std::int64_t bucket_cap_bytes = 0;
  std::vector<Bucket> initial;
  std::optional<std::vector<Bucket>> rebuilt;  ///< none when DDP does not rebuild
  std::optional<int> rebuild_iteration;
  std::string text;  ///< ddpsim buckets' output
  std::string json;  ///< ddpsim buckets --json
};

/// The scenario's gradient buckets, initial and rebuilt (ddpsim buckets).
BucketReport buckets(const Scenario& scenario);

struct AdviseOptions {
  std::string objective = "throughput";  ///< step, throughput, gpu_hours, goodput
  std::vector<int> world_sizes;          ///< empty: the scenario's
  std::optional<std::int64_t> global_batch_min, global_batch_max;
  int threads = 1;
  std::vector<std::string> programs;  ///< "DDP", "FULL_SHARD", ...; empty: every one that applies
  int top = 20;                       ///< configurations in the text (ddpsim advise --top)
};

/// One configuration the advisor simulated.
struct Candidate {
  std::string description;  ///< "DDP cap 25 MiB, accum 1, W=8", ...
  std::string program;
  double bucket_cap_mb = 0;
  std::string comm_hook;
  int accumulation = 1;
  int world_size = 0;
  bool checkpointing = false;
  std::optional<double> step_ms;
  double samples_per_s = 0;
  double efficiency = 0;
  std::int64_t peak_bytes = 0;
  bool fits = true;
  std::string outcome;
  double objective = 0;
};

struct Advice {
  std::string scenario;
  std::string objective;
  std::vector<Candidate> ranked;   ///< best first
  std::vector<Candidate> dropped;  ///< did not fit or complete
  std::vector<std::string> reasons;
  std::string text;  ///< ddpsim advise's output
  std::string json;  ///< ddpsim advise --json
  std::string html;  ///< ddpsim advise --html
};

/// Searches the scenario's open configurations (docs/advise.md).
Advice advise(const Scenario& scenario, const AdviseOptions& options = {});

/// The hang report of one folder of flight-recorder dumps (docs/flight-recorder.md).
struct Explanation {
  std::string folder;
  bool stuck = false;                   ///< some collective did not complete on every member
  std::int64_t collective_seq_id = 0;   ///< the first that did not complete everywhere
  std::vector<int> waiting, missing;    ///< who waits in it; who never issued it
  int culprit = -1;
  std::string reason, fix;
  std::string text;  ///< ddpsim explain's output for this folder
};
/// ddpsim explain: a folder of dumps, or a folder of such folders (each, in name order).
std::vector<Explanation> explain(const std::string& dump_dir);

/// ddpsim's version ("0.1.0") and the commit it was built from.
std::string version();

}  // namespace ddpsim
