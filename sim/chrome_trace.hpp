#pragma once
// Writes operations as a Chrome/Perfetto trace (JSON "traceEvents"): one
// process per rank, one track per stream, and a memory counter per rank
// when the run gives one. ui.perfetto.dev opens it.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "sim/engine.hpp"

namespace ddpsim::sim {

class ChromeTraceWriter final : public Observer {
 public:
  using NameFn = std::function<std::string(OpLabel)>;
  /// A rank's memory in bytes from the start of an operation on, if the
  /// operation changes it (none: the counter keeps its value).
  using MemoryFn = std::function<std::optional<std::int64_t>(const OpRecord&)>;
  /// `out` must outlive the writer; `name_of` names each operation.
  /// `max_ranks` > 0 records only ranks 0 .. max_ranks-1 of each run (a
  /// million-rank trace would be gigabytes); 0 records every rank.
  ChromeTraceWriter(std::ostream& out, NameFn name_of, int max_ranks = 0);
  ~ChromeTraceWriter() override;

  /// Starts a run: its ranks get fresh process ids, named "<run_name> rank <r>".
  /// With `memory`, each rank gets a "memory" counter track (MiB).
  void begin_run(std::string_view run_name, int world_size, MemoryFn memory = {});
  void on_op(const OpRecord& record) override;
  /// True once a run had more ranks than max_ranks (some were left out).
  bool truncated() const { return truncated_; }
  /// Closes the JSON document; called by the destructor if not before.
  void finish();

 private:
  void separator();
  std::ostream& out_;
  NameFn name_of_;
  MemoryFn memory_;
  int max_ranks_ = 0;
  bool truncated_ = false;
  int pid_base_ = 0;
  int next_pid_ = 0;
  bool first_ = true;
  bool finished_ = false;
};

}  // namespace ddpsim::sim
