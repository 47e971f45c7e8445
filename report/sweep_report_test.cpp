#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace ddpsim;

namespace {

const char* kLab = R"(name: lab
world_size: [2, 4]
training: {iterations: 3}
model: {forward_ms: 40, backward_ms: 80, gradient_bytes: 4000000}
collective: {latency_us: 180, bandwidth_GBps: 25, launch_overhead_us: 50}
)";

}  // namespace

TEST_CASE("without W=1 in the sweep, the baseline is simulated and said so") {
  const auto s = scenarios::parse_scenario(kLab, "lab.yaml");
  const auto r = scenarios::run_scenario(s);
  REQUIRE(r.rows.size() == 2);
  REQUIRE(r.rows[0].baseline_ms.has_value());
  CHECK(*r.rows[0].baseline_ms == doctest::Approx(120.05));
  CHECK_FALSE(r.baseline_in_sweep);
  CHECK(*r.rows[1].speedup == doctest::Approx(4 * 120.05 / *r.rows[1].run.step_ms));
  std::ostringstream table;
  report::write_table(table, s, r);
  CHECK(table.str().find("with t1 simulated at W=1: 120.0 ms") != std::string::npos);
}

TEST_CASE("the JSON result has the documented fields") {
  const auto s = scenarios::parse_scenario(kLab, "lab.yaml");
  const auto doc = nlohmann::json::parse(report::to_json(s, scenarios::run_scenario(s)));
  CHECK(doc.at("scenario") == "lab");
  CHECK(doc.at("engine") == "analytic");
  CHECK(doc.at("seed") == 0);
  const auto& run = doc.at("runs").at(1);
  CHECK(run.at("world_size") == 4);
  CHECK(run.at("outcome") == "completed");
  CHECK(run.at("global_batch") == 128);
  CHECK(run.at("iterations") == 3);
  CHECK(run.at("ranks").size() == 4);
  for (const char* key : {"data_ms", "compute_ms", "collective_ms", "exposed_comm_ms", "wait_ms"}) {
    CHECK(run.at("ranks").at(0).contains(key));
  }
  // 120 ms compute + 50 us launch + 6 * 180 us + 1.5 * 160 us.
  CHECK(run.at("step_ms").get<double>() == doctest::Approx(121.37));
}

TEST_CASE("a hung run reports who waits where, the culprit and the fix, in the table and the JSON") {
  const auto s = scenarios::parse_scenario(kLab, "lab.yaml");
  scenarios::SweepResult r = scenarios::run_scenario(s);
  // A failure as models::analyse_failure reports one (models/failure_test.cpp produces them).
  models::RunResult& run = r.rows[0].run;
  run.outcome = models::Outcome::kHang;
  run.step_ms.reset();
  r.rows[0].speedup.reset();
  r.rows[0].efficiency.reset();
  models::FailureReport f;
  f.sequence = 7;
  f.ranks = {{0, models::RankState::kIssued, "all_reduce bucket 0 of iteration 2", "all_reduce", 4000000, "float32", 2, 0, ""},
             {1, models::RankState::kExited, "", "", 0, "", -1, -1, "left its loop after 2 iterations and exited"}};
  f.waiting_ranks = {0};
  f.missing_ranks = {1};
  f.culprit_rank = 1;
  f.reason = "collective #7: rank 1 left its loop";
  f.fix = "give every rank the same number of batches";
  f.detected_at_ms = 600000;
  f.detection = "NCCL watchdog";
  run.failure = f;

  std::ostringstream table;
  report::write_table(table, s, r);
  const std::string t = table.str();
  CHECK(t.find("\n2        -        ") != std::string::npos);  // workers, step_ms; the closed form follows
  CHECK(t.find("-        -  hang") != std::string::npos);         // speedup, efficiency, outcome
  CHECK(t.find("W=2: hang, detected at 600000.000 ms (NCCL watchdog)") != std::string::npos);
  CHECK(t.find("rank 0 issued all_reduce bucket 0 of iteration 2 (all_reduce 4000000 bytes)") != std::string::npos);
  CHECK(t.find("rank 1 exited: left its loop after 2 iterations") != std::string::npos);
  CHECK(t.find("waiting: rank 0; missing: rank 1") != std::string::npos);
  CHECK(t.find("culprit: rank 1: collective #7") != std::string::npos);
  CHECK(t.find("fix: give every rank") != std::string::npos);

  const auto doc = nlohmann::json::parse(report::to_json(s, r));
  const auto& j = doc.at("runs").at(0);
  CHECK(j.at("outcome") == "hang");
  CHECK(j.at("step_ms").is_null());
  CHECK(j.at("failure").at("sequence") == 7);
  CHECK(j.at("failure").at("missing_ranks") == nlohmann::json::array({1}));
  CHECK(j.at("failure").at("culprit_rank") == 1);
  CHECK(j.at("failure").at("ranks").at(0).at("bucket") == 0);
  CHECK(j.at("failure").at("detected_at_ms") == 600000.0);
}

TEST_CASE("a list of bucket caps sweeps them, each with its own one-rank baseline") {
  const std::string text = std::string(kLab) + "ddp: {bucket_cap_mb: [1, 25]}\n";
  const auto s = scenarios::parse_scenario(text, "lab.yaml");
  CHECK(s.sweep.bucket_caps_mb == std::vector<double>{1, 25});
  const auto r = scenarios::run_scenario(s);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.bucket_sweep);
  CHECK(r.rows[0].bucket_cap_mb == 1);
  CHECK(r.rows[3].bucket_cap_mb == 25);
  CHECK(r.rows[3].run.world_size == 4);
  // One axis: the scenario's job is the first row's, each row's job has its own cap.
  CHECK(s.job.ddp.bucket_cap_bytes == models::kMiB);
  CHECK(r.rows[0].job->ddp.bucket_cap_bytes == models::kMiB);
  CHECK(r.rows[3].job->ddp.bucket_cap_bytes == 25 * models::kMiB);
  std::ostringstream table;
  report::write_table(table, s, r);
  CHECK(table.str().find("bucket_mb  workers") != std::string::npos);
  const auto doc = nlohmann::json::parse(report::to_json(s, r));
  CHECK(doc.at("runs").at(0).at("buckets").at("bucket_cap_bytes") == 1048576);
  CHECK_THROWS_AS(scenarios::parse_scenario(std::string(kLab) + "ddp: {bucket_cap_mb: [5, 5]}\n", "lab.yaml"),
                  scenarios::InputError);
  CHECK_THROWS_AS(scenarios::parse_scenario(std::string(kLab) + "ddp: {bucket_cap_mb: [5, 0]}\n", "lab.yaml"),
                  scenarios::InputError);
}

TEST_CASE("restart budget: met with heartbeat detection, missed when waiting for the NCCL watchdog") {
  const std::string base = R"(world_size: 4
training: {iterations: 400, warmup_iterations: 2}
model: {gradient_bytes: 4000000, forward_ms: 100, backward_ms: 200}
collective: {latency_us: 10, bandwidth_GBps: 40}
faults: [{type: crash, rank: 1, at_ms: 100000}]
checkpoint: {interval_min: 1, size_gb: 60, write_GBps: 2, read_GBps: 2}
)";
  const auto with = [&](const std::string& detection) {
    const auto s = scenarios::parse_scenario(
        base + "failures: {mtbf_hours: 1000, detection: " + detection + ", relaunch_s: 120, horizon_hours: 1}\n", "r.yaml");
    return scenarios::run_scenario(s).rows.at(0);
  };
  const auto hb = with("heartbeat");
  REQUIRE(hb.crash_recovery.has_value());
  const auto& r = hb.crash_recovery->recovery;
  CHECK(r.detection.ms() == doctest::Approx(30'000));
  CHECK(r.reload.ms() == doctest::Approx(30'000));     // 60 GB at 2 GB/s
  CHECK(r.recompute.ms() == doctest::Approx(40'000));  // crash at 100 s, checkpoint at 60 s
  CHECK(hb.crash_recovery->within_budget);
  CHECK(hb.crash_recovery->max_watchdog_s == doctest::Approx(900 - 120 - 30 - 40));
  const auto wd = with("watchdog");
  CHECK(wd.crash_recovery->recovery.detection.ms() == doctest::Approx(600'000));
  CHECK(wd.crash_recovery->within_budget);  // 600 + 120 + 30 + 40 s = 13.2 min
  const auto s = scenarios::parse_scenario(base + "watchdog: {timeout_s: 1800}\n"
                                                  "failures: {mtbf_hours: 1000, relaunch_s: 120, horizon_hours: 1}\n",
                                           "r.yaml");
  CHECK_FALSE(scenarios::run_scenario(s).rows.at(0).crash_recovery->within_budget);
  CHECK_THROWS_AS(scenarios::parse_scenario(base.substr(0, base.find("checkpoint")) +
                                                "failures: {mtbf_hours: 1000, relaunch_s: 1}\n",
                                            "r.yaml"),
                  scenarios::InputError);
}
