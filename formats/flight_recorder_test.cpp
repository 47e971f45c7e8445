#include "formats/flight_recorder.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace ddpsim::formats;

namespace {

// The dump of PyTorch's flight-recorder tutorial (docs.pytorch.org), as JSON.
constexpr const char* kTutorial = R"({
  "version": "2.5",
  "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
  "pg_status": {"0": {"last_enqueued_collective": 2, "last_started_collective": -1, "last_completed_collective": 2}},
  "entries": [
    {"frames": [{"name": "test_short_pickle", "filename": "test_c10d_nccl.py", "line": 3647}],
     "record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": 1,
     "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce", "time_created_ns": 1724779239936775119,
     "input_sizes": [[3, 4]], "input_dtypes": ["Float"], "output_sizes": [[3, 4]], "output_dtypes": ["Float"],
     "state": "completed", "time_discovered_started_ns": null, "time_discovered_completed_ns": 1724779239975811724,
     "retired": true, "timeout_ms": 600000, "is_p2p": false}
  ]
})";

std::string error_of(const std::string& text, const std::string& file = "nccl_trace_rank_1") {
  try {
    parse_flight_record(text, file);
  } catch (const FormatError& e) {
    return e.key() + ": " + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a flight-recorder dump in PyTorch's JSON form reads, and writes back to what reads the same") {
  const FlightRecord r = parse_flight_record(kTutorial, "/tmp/nccl_trace_rank_1");
  CHECK(r.rank == 1);
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].ranks == std::vector<int>{0, 1});
  CHECK(r.groups[0].desc == "default_pg");
  REQUIRE(r.status.size() == 1);
  CHECK(r.status[0].last_completed == 2);
  REQUIRE(r.entries.size() == 1);
  const FrEntry& e = r.entries[0];
  CHECK(e.profiling_name == "nccl:all_reduce");
  CHECK(e.time_created_ns == 1724779239936775119);  // past 2^53: read exactly
  CHECK(e.input_sizes == std::vector<std::vector<std::int64_t>>{{3, 4}});
  CHECK_FALSE(e.time_discovered_started_ns);
  CHECK(*e.time_discovered_completed_ns == 1724779239975811724);
  CHECK(e.state == "completed");
  REQUIRE(e.frames.size() == 1);  // the stack that issued it, kept and written back
  CHECK(e.frames[0] == FrFrame{"test_short_pickle", "test_c10d_nccl.py", 3647});
  const FlightRecord again = parse_flight_record(to_json(r), "x/trace_1.json");
  CHECK(again.entries[0].frames == e.frames);
  CHECK(to_json(again) == to_json(r));
}

TEST_CASE("frames that are not a list of objects are refused with the entry and the field") {
  std::string text = kTutorial;
  text.replace(text.find("[{\"name\": \"test_short_pickle\""), 1, "[3, ");
  CHECK(error_of(text) == "entries[0].frames[0]: expected an object with name, filename and line");
}

TEST_CASE("a malformed dump is refused with the file, the field and what was expected") {
  CHECK(error_of("{}").find("entries: missing") != std::string::npos);
  CHECK(error_of(R"({"entries": [{"record_id": 0}]})").find("entries[0].pg_id: missing") != std::string::npos);
  std::string bad_state = kTutorial;
  bad_state.replace(bad_state.find("\"completed\""), 11, "\"stuck\"");
  CHECK(error_of(bad_state).find("entries[0].state: expected scheduled, started or completed, got 'stuck'") !=
        std::string::npos);
  CHECK(error_of("\x80\x02}q\x00.").find("a pickle dump") != std::string::npos);
  CHECK(error_of(kTutorial, "dump.json").find("expected a file name ending in the rank") != std::string::npos);
  CHECK(error_of("[1, 2").find("expected a flight-recorder dump in JSON") != std::string::npos);
}

TEST_CASE("a folder of dumps reads by rank; two of one rank or none at all are refused") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ddpsim_fr_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int r : {1, 0}) std::ofstream(dir / ("nccl_trace_rank_" + std::to_string(r))) << kTutorial;
  std::ofstream(dir / "README") << "not a dump";
  const std::vector<FlightRecord> all = read_flight_records(dir.string());
  REQUIRE(all.size() == 2);
  CHECK(all[0].rank == 0);
  CHECK(all[1].rank == 1);
  std::ofstream(dir / "other_1.json") << kTutorial;
  CHECK_THROWS_AS(read_flight_records(dir.string()), FormatError);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CHECK_THROWS_AS(read_flight_records(dir.string()), FormatError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("pickled dumps, PyTorch's default form, read as the JSON ones; what is not plain data is refused") {
  const std::string dir = std::string(DDPSIM_SOURCE_DIR) + "/tests/flight_recorder/";
  const std::vector<FlightRecord> pickled = read_flight_records(dir + "pickle");  // protocols 2 (torch's) and 5
  const std::vector<FlightRecord> json = read_flight_records(dir + "tutorial");
  REQUIRE(pickled.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) CHECK(to_json(pickled[r]) == to_json(json[r]));
  const auto refused = [](const std::string& bytes) { return error_of(bytes, "nccl_trace_rank_0"); };
  CHECK(refused(std::string("\x80\x02}q\x00", 5)).find("pickle byte 5: truncated") != std::string::npos);
  CHECK(refused(std::string("\x80\x02\x63os\nsystem\n.", 14)).find("the global os.system") != std::string::npos);
  std::string deep = "\x80\x02";
  deep += std::string(70, ']') + std::string(69, 'a') + ".";
  CHECK(refused(deep).find("nested deeper than 64") != std::string::npos);
  CHECK(refused(std::string("\x80\x02h\x07.", 5)).find("memo key 7 not set") != std::string::npos);
}
