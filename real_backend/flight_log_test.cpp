// The real trainer's flight recorder: what each rank keeps of its
// collectives, in PyTorch's dump form (real.hang runs it on a real hang).
#include "real_backend/flight_log.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using ddpsim::real::FlightLog;

TEST_CASE("the flight log numbers each group's collectives from 1 and tracks their states") {
  FlightLog log(2, {{"0", "default_pg", {0, 1, 2, 3}}, {"5", "shard_group_1", {2, 3}}}, "mpi", 2000);
  const auto a = log.enqueue({0, "all_reduce", 100, 100}, 10);
  const auto b = log.enqueue({1, "_allgather_base", 25, 50}, 20);
  const auto c = log.enqueue({0, "barrier", 0, 0}, 30);
  log.start(a, 11);
  log.complete(a, 2000011);
  log.start(b, 21);
  const ddpsim::formats::FlightRecord r = log.record();
  CHECK(r.rank == 2);
  REQUIRE(r.entries.size() == 3);
  CHECK(r.entries[0].collective_seq_id == 1);
  CHECK(r.entries[0].state == "completed");
  CHECK(r.entries[0].duration_ms == doctest::Approx(2.0));
  CHECK(r.entries[0].profiling_name == "mpi:all_reduce");
  CHECK(r.entries[1].pg_id == "5");
  CHECK(r.entries[1].collective_seq_id == 1);  // its own group's first
  CHECK(r.entries[1].state == "started");
  CHECK(r.entries[1].input_sizes == std::vector<std::vector<std::int64_t>>{{25}});
  CHECK(r.entries[1].output_sizes == std::vector<std::vector<std::int64_t>>{{50}});
  CHECK(r.entries[2].collective_seq_id == 2);
  CHECK(r.entries[2].state == "scheduled");
  CHECK(r.entries[2].record_id == c);
  REQUIRE(r.status.size() == 2);
  CHECK(r.status[0].last_enqueued == 2);
  CHECK(r.status[0].last_started == 1);
  CHECK(r.status[0].last_completed == 1);
  CHECK(r.status[1].last_started == 1);
  CHECK(r.status[1].last_completed == -1);
  CHECK(r.groups[1].ranks == std::vector<int>{2, 3});
  CHECK(r.entries[0].timeout_ms == 2000);
}

TEST_CASE("the flight log keeps its last entries, and the dump reads back as written") {
  FlightLog log(0, {{"0", "default_pg", {0, 1}}}, "mpi", 600000, 2);
  const auto first = log.enqueue({0, "all_reduce", 1, 1}, 1);
  log.enqueue({0, "all_reduce", 2, 2}, 2);
  log.enqueue({0, "broadcast", 3, 3, "Byte"}, 3);
  log.start(first, 4);  // no longer kept: ignored
  const ddpsim::formats::FlightRecord r = log.record();
  REQUIRE(r.entries.size() == 2);
  CHECK(r.entries[0].collective_seq_id == 2);
  CHECK(r.entries[1].input_dtypes == std::vector<std::string>{"Byte"});
  const std::string dir = (std::filesystem::temp_directory_path() / "ddpsim_flight_log_test").string();
  std::filesystem::remove_all(dir);
  ddpsim::real::write_flight_dump(dir, r);
  const auto back = ddpsim::formats::read_flight_records(dir);
  REQUIRE(back.size() == 1);
  CHECK(back[0].rank == 0);
  CHECK(ddpsim::formats::to_json(back[0]) == ddpsim::formats::to_json(r));
  std::filesystem::remove_all(dir);
  CHECK_THROWS_AS(log.enqueue({3, "all_reduce", 1, 1}, 5), std::out_of_range);
}
