#pragma once
// The owner of PyTorch's NCCL flight-recorder dump, in its JSON form: what
// each rank's ProcessGroupNCCL keeps of its last collectives and leaves
// behind when the watchdog fires (TORCH_NCCL_TRACE_BUFFER_SIZE,
// TORCH_NCCL_DUMP_ON_TIMEOUT; one file a rank, named PREFIX<rank>). ddpsim
// run --flight-recorder writes it; ddpsim explain reads it, whoever wrote
// it. Fields and their sources: ../shared/reference/torch_bridge.md
// section 4.3 and docs/flight-recorder.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/measured_run.hpp"  // FormatError

namespace ddpsim::formats {

/// One frame of the Python stack that issued a collective (PyTorch records
/// them; ddpsim's dumps write one, naming the op and its iteration).
struct FrFrame {
  std::string name, filename;
  std::int64_t line = 0;
  bool operator==(const FrFrame&) const = default;
};

/// One collective as a rank's flight recorder holds it.
struct FrEntry {
  std::int64_t record_id = 0;          ///< the rank's count of recorded operations, from 0
  std::string pg_id;                   ///< its process group, a key of pg_config
  std::string pg_desc;                 ///< the group's description ("default_pg")
  std::int64_t collective_seq_id = 0;  ///< the group's count of collectives on this rank, from 1
  std::int64_t p2p_seq_id = 0;
  std::int64_t op_id = 0;
  std::string profiling_name;          ///< "nccl:all_reduce", "nccl:_allgather_base", ...
  std::int64_t time_created_ns = 0;    ///< when the CPU enqueued it
  std::vector<std::vector<std::int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;  ///< "Float", "BFloat16", "Half"
  std::string state;                   ///< "scheduled", "started" or "completed"
  std::optional<std::int64_t> time_discovered_started_ns, time_discovered_completed_ns;
  std::optional<double> duration_ms;
  bool retired = false;
  std::int64_t timeout_ms = 0;
  bool is_p2p = false;
  std::vector<FrFrame> frames;  ///< innermost first, as PyTorch writes them; may be empty
};

/// A process group of the dump's pg_config.
struct FrGroup {
  std::string id;     ///< the key ("0")
  std::string name;
  std::string desc;
  std::vector<int> ranks;  ///< its members, global ranks
};

/// A group's progress on this rank (pg_status): collective sequence numbers, -1 for none.
struct FrStatus {
  std::string pg_id;
  std::int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

struct FlightRecord {
  int rank = 0;  ///< from the file name's trailing digits (the dump itself does not say)
  std::string version = "2.5";
  std::vector<FrGroup> groups;
  std::vector<FrStatus> status;
  std::vector<FrEntry> entries;  ///< oldest first
};

/// A rank's dump's file name, PyTorch's default: nccl_trace_rank_<rank>
/// (TORCH_NCCL_DEBUG_INFO_TEMP_FILE's prefix, then the rank).
std::string dump_file_name(int rank);
/// The dump as PyTorch's JSON form writes it (one line per entry).
std::string to_json(const FlightRecord& record);
/// A dump's text; `file` names it in errors, and its trailing digits give
/// the rank. JSON only: a pickle dump gets a FormatError saying how to
/// convert it.
FlightRecord parse_flight_record(std::string_view text, const std::string& file);
/// Every dump in `dir` (regular files whose names end in a rank number,
/// "nccl_trace_rank_3", optionally ".json"), by rank. FormatError when there
/// are none, when two give the same rank, or when one is malformed.
std::vector<FlightRecord> read_flight_records(const std::string& dir);

}  // namespace ddpsim::formats
