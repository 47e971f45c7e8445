#include "scenarios/report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace ddpsim::scenarios {
namespace {

// Results carry nanosecond resolution: round milliseconds to 6 decimals so
// the JSON holds no floating-point noise.
double ms6(double ms) { return std::round(ms * 1e6) / 1e6; }
double ratio6(double x) { return std::round(x * 1e6) / 1e6; }

std::string where(const sim::BlockedOp& b) {
  const std::string op = std::string(models::tag_name(b.label));
  if (b.in_rendezvous) {
    std::string missing;
    for (std::size_t i = 0; i < b.missing_ranks.size(); ++i) {
      missing += (i ? ", " : "") + std::to_string(b.missing_ranks[i]);
    }
    return fmt::format("in {} #{} (iteration {}, {} bytes), waiting for rank(s) {} that never issued it",
                       sim::to_string(b.collective.kind), b.group_seq, b.label.iteration, b.collective.bytes,
                       missing);
  }
  return fmt::format("before {} (iteration {}), waiting for an earlier operation", op, b.label.iteration);
}

}  // namespace

void write_table(std::ostream& out, const Scenario& scenario, const SweepResult& result) {
  const models::DdpJob& job = scenario.job;
  fmt::print(out, "{}: analytic engine, seed {}, {} iterations ({} warm-up)\n\n", scenario.name, scenario.seed,
             job.iterations, job.warmup_iterations);
  fmt::print(out, "{:<9}{:<9}{:<9}{}\n", "workers", "step_ms", "speedup", "efficiency");
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    const std::string step = r.step_ms ? fmt::format("{:.1f}", *r.step_ms) : "-";
    const std::string speedup = row.speedup ? fmt::format("{:.1f}x", *row.speedup) : "-";
    const std::string eff = row.efficiency ? fmt::format("{:.1f}%", *row.efficiency * 100) : "-";
    fmt::print(out, "{:<9}{:<9}{:<9}{}", r.world_size, step, speedup, eff);
    if (r.outcome != models::Outcome::kCompleted) fmt::print(out, "  {}", models::to_string(r.outcome));
    fmt::print(out, "\n");
  }
  if (!result.baseline_in_sweep && result.baseline_ms) {
    fmt::print(out, "\nspeedup = W * t1 / tW, with t1 = {:.1f} ms simulated at W=1\n", *result.baseline_ms);
  }
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    if (r.outcome != models::Outcome::kHang) continue;
    fmt::print(out, "\nW={}: hang after {:.3f} ms; {} stream(s) blocked:\n", r.world_size, r.end.ms(),
               r.blocked.size());
    for (const sim::BlockedOp& b : r.blocked) {
      fmt::print(out, "  rank {} {} stream: {}\n", b.rank, sim::to_string(b.stream), where(b));
    }
  }
}

void write_csv(std::ostream& out, const SweepResult& result) {
  out << "world_size,outcome,step_ms,speedup,efficiency,global_batch\n";
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    fmt::print(out, "{},{},{},{},{},{}\n", r.world_size, models::to_string(r.outcome),
               r.step_ms ? fmt::format("{}", ms6(*r.step_ms)) : "", row.speedup ? fmt::format("{}", ratio6(*row.speedup)) : "",
               row.efficiency ? fmt::format("{}", ratio6(*row.efficiency)) : "", r.global_batch);
  }
}

std::string to_json(const Scenario& scenario, const SweepResult& result) {
  using nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(ratio6(*v)) : ordered_json(nullptr); };
  ordered_json doc;
  doc["scenario"] = scenario.name;
  doc["engine"] = "analytic";
  doc["seed"] = scenario.seed;
  doc["baseline_step_ms"] = opt(result.baseline_ms);
  ordered_json runs = ordered_json::array();
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    ordered_json run;
    run["world_size"] = r.world_size;
    run["outcome"] = models::to_string(r.outcome);
    run["step_ms"] = opt(r.step_ms);
    run["speedup"] = opt(row.speedup);
    run["efficiency"] = opt(row.efficiency);
    run["global_batch"] = r.global_batch;
    run["iterations"] = r.iterations;
    run["warmup_iterations"] = scenario.job.warmup_iterations;
    run["measured_iterations"] = r.measured_iterations;
    run["simulated_ms"] = ms6(r.end.ms());
    ordered_json ranks = ordered_json::array();
    for (const models::RankStats& s : r.ranks) {
      ranks.push_back({{"rank", s.rank},
                       {"data_ms", ms6(s.data_ms)},
                       {"compute_ms", ms6(s.compute_ms)},
                       {"collective_ms", ms6(s.collective_ms)},
                       {"exposed_comm_ms", ms6(s.exposed_comm_ms)},
                       {"wait_ms", ms6(s.wait_ms)}});
    }
    run["ranks"] = std::move(ranks);
    ordered_json blocked = ordered_json::array();
    for (const sim::BlockedOp& b : r.blocked) {
      ordered_json e{{"rank", b.rank},
                     {"stream", sim::to_string(b.stream)},
                     {"op", models::tag_name(b.label)},
                     {"iteration", b.label.iteration},
                     {"since_ms", ms6(b.since.ms())}};
      if (b.in_rendezvous) {
        e["collective"] = sim::to_string(b.collective.kind);
        e["group_seq"] = b.group_seq;
        e["bytes"] = b.collective.bytes;
        e["missing_ranks"] = b.missing_ranks;
      }
      blocked.push_back(std::move(e));
    }
    run["blocked"] = std::move(blocked);
    runs.push_back(std::move(run));
  }
  doc["runs"] = std::move(runs);
  return doc.dump(2) + "\n";
}

}  // namespace ddpsim::scenarios
