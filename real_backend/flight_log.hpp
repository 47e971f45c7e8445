#pragma once
// A rank's flight recorder, as PyTorch's ProcessGroupNCCL keeps one: its
// last collectives, each with its process group, sequence number, sizes,
// dtypes, times and state (scheduled, started, completed). The watchdog
// writes it as PyTorch's dump (formats/flight_recorder.hpp) when it fires,
// so `ddpsim explain DIR` reads a real hang of ddpsim-real as it reads
// PyTorch's. Pure logic: the transport calls it under its own lock.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "formats/flight_recorder.hpp"

namespace ddpsim::real {

class FlightLog {
 public:
  /// A process group of the dump's pg_config.
  struct Group {
    std::string id;          ///< the same on every member: "0" for the world
    std::string desc;        ///< "default_pg", "shard_group_0", ...
    std::vector<int> ranks;  ///< global ranks
  };
  /// One collective as the transport posts it.
  struct Call {
    std::size_t group = 0;     ///< index into the groups
    std::string op;            ///< "all_reduce", "_allgather_base", "barrier", ...
    std::int64_t in = 0, out = 0;  ///< elements of its input and output
    std::string dtype = "Float";
  };

  /// `backend` prefixes the profiling names ("mpi" gives "mpi:all_reduce");
  /// `buffer` entries are kept (TORCH_NCCL_TRACE_BUFFER_SIZE).
  FlightLog(int rank, std::vector<Group> groups, std::string backend, std::int64_t timeout_ms, std::size_t buffer = 2000);

  /// The collective enqueued at `now_ns`; returns its record id.
  std::int64_t enqueue(const Call& call, std::int64_t now_ns);
  /// Its kernel (MPI call) began, or completed; ids no longer kept are ignored.
  void start(std::int64_t id, std::int64_t now_ns);
  void complete(std::int64_t id, std::int64_t now_ns);

  /// The dump as the watchdog leaves it.
  formats::FlightRecord record() const;

 private:
  formats::FrEntry* find(std::int64_t id);
  formats::FrStatus& status_of(const std::string& pg_id);

  int rank_;
  std::vector<Group> groups_;
  std::string backend_;
  std::int64_t timeout_ms_;
  std::size_t buffer_;
  std::int64_t next_id_ = 0;
  std::vector<std::int64_t> seq_;  ///< per group: collectives enqueued
  std::vector<formats::FrStatus> status_;
  std::deque<formats::FrEntry> entries_;
};

/// Writes `record` to `dir`/nccl_trace_rank_<rank>, creating `dir`;
/// std::runtime_error when it cannot.
void write_flight_dump(const std::string& dir, const formats::FlightRecord& record);

}  // namespace ddpsim::real
