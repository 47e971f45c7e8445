// A sweep split over processes (sweep/partition.hpp), the processes
// simulated in one: the first reports what one process reports, byte for
// byte, whatever the sweep holds (hangs, crashes with elastic restarts,
// sampler audits, bucket caps). SimGrid runs once a process, so its split
// (by world size, statistics summed) is checked under mpirun: mpi.run_np*.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report/sweep_report.hpp"
#include "sweep/run_wire.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"

using namespace ddpsim;

namespace {

std::string reported(const scenarios::Scenario& s, const scenarios::SweepResult& r) {
  std::ostringstream table;
  report::write_table(table, s, r);
  return table.str() + report::to_json(s, r);
}

// The sweep as `count` processes run it, the others before the first; each
// process's share lands in `shares`.
scenarios::SweepResult split(const scenarios::Scenario& s, int count, std::vector<std::string>& shares) {
  shares.assign(static_cast<std::size_t>(count), "");
  for (int index = 1; index < count; ++index) {
    const scenarios::Partition p{index, count, [&, index](const std::string& mine) {
                                   shares[static_cast<std::size_t>(index)] = mine;
                                   return std::vector<std::string>{};
                                 }};
    CHECK_FALSE(scenarios::run_scenario(s, nullptr, 2, {}, p).complete);
  }
  const scenarios::Partition first{0, count, [&](const std::string& mine) {
                                     shares[0] = mine;
                                     return shares;
                                   }};
  return scenarios::run_scenario(s, nullptr, 2, {}, first);
}

std::string source(const std::string& name) {
  std::ifstream in(std::string(DDPSIM_SOURCE_DIR) + "/scenarios/" + name);
  return {std::istreambuf_iterator<char>(in), {}};
}

// `name`'s text with each (from, to) replaced, as one process and split.
void check_split(const std::string& name, const std::vector<std::pair<std::string, std::string>>& edits = {}) {
  std::string text = source(name);
  for (const auto& [from, to] : edits) {
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  }
  const scenarios::Scenario s = scenarios::parse_scenario(text, name);
  const std::string one = reported(s, scenarios::run_scenario(s, nullptr, 2));
  for (int count : {2, 3}) {
    CAPTURE(name);
    CAPTURE(count);
    std::vector<std::string> shares;
    const scenarios::SweepResult r = split(s, count, shares);
    REQUIRE(r.complete);
    CHECK(reported(s, r) == one);
    int working = 0;  // processes that simulated something
    for (const std::string& share : shares) working += scenarios::decode_share(share).runs.empty() ? 0 : 1;
    CHECK(working >= 2);
  }
}

}  // namespace

TEST_CASE("a sweep split over 2 and 3 processes reports what one process does") {
  check_split("hang_skip_backward.yaml");  // hangs: blocked ops, the failure report
  // Failures, restarts, the elastic restart's run, crashes beyond the first
  // process: rank 3 killed at minute 2 of 100 steps, at 4 and 8 ranks.
  check_split("restart_8gpu.yaml", {{"world_size: 8", "world_size: [4, 8]"},
                                    {"iterations: 1000", "iterations: 100"},
                                    {"at_ms: 1440000", "at_ms: 120000"}});
  check_split("ddp_epoch.yaml");           // the sampler's audit
  check_split("bucket_sweep.yaml");        // caps x world sizes, baselines in the sweep
  check_split("published/resnet50_v100.yaml");
}

TEST_CASE("a process's runs cross the wire exactly") {
  models::RunResult r;
  r.world_size = 3;
  r.outcome = models::Outcome::kHang;
  r.step_ms = 0.1 + 0.2;  // not a round decimal
  r.ranks = {{1, 1.0 / 3, 2, std::numeric_limits<double>::infinity(), 4, 5, 6, 7, 8, 9}};
  sim::BlockedOp b;
  b.rank = 2;
  b.since = sim::Time::ns(123456789012345);
  b.waits_for = sim::OpRef{7, 9};
  b.missing_ranks = {0, 1};
  r.blocked = {b};
  models::FailureReport f;
  f.detected_at_ms = 1800000.5;
  f.ranks = {{1, models::RankState::kCrashed, "all_reduce bucket 0", "all_reduce", 1 << 20, "float32", 4, 0, "died"}};
  r.failure = f;
  r.events = std::numeric_limits<std::uint64_t>::max();
  const scenarios::ProcessShare in{{{5, r}}, {{2, {{"W8/nccl_trace_rank_3", "{}"}}}}, netsim::SimgridStats{3, 4, 5, 6}, ""};
  const scenarios::ProcessShare out = scenarios::decode_share(scenarios::encode_share(in));
  REQUIRE(out.runs.size() == 1);
  CHECK(out.runs[0].first == 5);
  const models::RunResult& o = out.runs[0].second;
  CHECK(o.outcome == models::Outcome::kHang);
  CHECK(*o.step_ms == 0.1 + 0.2);
  CHECK(o.ranks[0].data_ms == 1.0 / 3);
  CHECK(std::isinf(o.ranks[0].collective_ms));
  CHECK(o.blocked[0].since == b.since);
  CHECK(o.blocked[0].waits_for->index == 9);
  CHECK(o.blocked[0].missing_ranks == b.missing_ranks);
  CHECK(*o.failure->detected_at_ms == 1800000.5);
  CHECK(o.failure->ranks[0].state == models::RankState::kCrashed);
  CHECK(o.failure->ranks[0].detail == "died");
  CHECK_FALSE(o.failure->sequence.has_value());
  CHECK(o.events == r.events);
  CHECK(out.simgrid->transfers == 4);
  CHECK(out.recorded == in.recorded);
  CHECK_THROWS_AS(scenarios::decode_share("not cbor"), std::runtime_error);
}

TEST_CASE("bad input found on another process is bad input on the first; anything else stays a failure") {
  const auto s = scenarios::parse_scenario(
      "world_size: [1, 2, 4]\nmodel: {gradient_bytes: 4000, forward_ms: 1, backward_ms: 2}\n"
      "collective: {latency_us: 1, bandwidth_GBps: 10}\n",
      "s.yaml");
  const auto split = [&](std::string error) {
    scenarios::Partition part;
    part.count = 2;
    part.gather = [error](const std::string& mine) {
      scenarios::ProcessShare other;
      other.error = error;
      return std::vector<std::string>{mine, scenarios::encode_share(other)};
    };
    return scenarios::run_scenario(s, nullptr, 1, {}, part);
  };
  try {
    split("input:s.yaml: a collective's latency term is 1e+12 s: expected values whose simulated times fit");
    FAIL("no error");
  } catch (const scenarios::InputError& e) {
    CHECK(std::string(e.what()) == "s.yaml: a collective's latency term is 1e+12 s: expected values whose simulated times fit");
  }
  CHECK_THROWS_WITH_AS(split("std::bad_variant_access"), "MPI process 1: std::bad_variant_access", std::runtime_error);
}
