#include "report/sweep_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/baseline.hpp"
#include "models/nccl_model.hpp"
#include "present/columns.hpp"
#include "present/efficiency.hpp"
#include "present/plot.hpp"
#include "report/cluster_report.hpp"
#include "report/link_report.hpp"
#include "report/program_report.hpp"
#include "report/rounding.hpp"
#include "loader/memory_plan.hpp"
#include "sim/build_info.hpp"

namespace ddpsim::report {

using namespace ddpsim::scenarios;  // the scenario and the sweep it renders

namespace {

using nlohmann::ordered_json;

ordered_json bucket_list(const models::ModelSpec& model, const std::vector<models::Bucket>& buckets) {
  ordered_json list = ordered_json::array();
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    ordered_json names = ordered_json::array();
    for (int p : buckets[i].params) names.push_back(model.parameters[static_cast<std::size_t>(p)].name);
    list.push_back({{"index", i},
                    {"bytes", buckets[i].bytes},
                    {"dtype", models::to_string(buckets[i].dtype)},
                    {"params", std::move(names)}});
  }
  return list;
}

// DDP's buckets as a row's program summary has them (sweep/program_summary.hpp).
ordered_json buckets_json(const models::DdpJob& job, const ProgramSummary& p) {
  return {{"bucket_cap_bytes", job.ddp.bucket_cap_bytes},
          {"initial", bucket_list(job.model, p.initial_buckets)},
          {"rebuilt", p.rebuilt_buckets ? bucket_list(job.model, *p.rebuilt_buckets) : ordered_json(nullptr)},
          {"rebuild_iteration", p.rebuild_iteration ? ordered_json(*p.rebuild_iteration) : ordered_json(nullptr)}};
}

// Example IDs are listed while they stay readable: up to 4,096 per audit.
bool lists_ids(const models::SamplerAudit& a) {
  return a.config.dataset_size * static_cast<std::int64_t>(a.epochs.size()) <= 4096;
}

ordered_json sampler_json(const models::SamplerAudit& a) {
  ordered_json epochs = ordered_json::array();
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    const models::EpochAudit& ea = a.epochs[e];
    ordered_json ranks = ordered_json::array();
    for (std::size_t r = 0; r < ea.ranks.size(); ++r) {
      ordered_json rank{{"rank", r},
                        {"samples", ea.ranks[r].ids.size()},
                        {"batches", ea.ranks[r].batches},
                        {"last_batch_size", ea.ranks[r].last_batch_size}};
      if (lists_ids(a)) rank["ids"] = ea.ranks[r].ids;
      ranks.push_back(std::move(rank));
    }
    epochs.push_back({{"epoch", e},
                      {"shuffle_seed", ea.epoch_seed},
                      {"same_order_as_previous", ea.same_order_as_previous},
                      {"duplicates", ea.duplicates},
                      {"omissions", ea.omissions},
                      {"ranks", std::move(ranks)}});
  }
  return {{"dataset_size", a.config.dataset_size},
          {"shuffle", a.config.shuffle},
          {"drop_last", a.config.drop_last},
          {"num_samples", models::num_samples(a.config)},
          {"total_size", models::total_size(a.config)},
          {"batch_size", a.batch_size},
          {"epochs", std::move(epochs)},
          {"warnings", a.warnings}};
}

std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// What each rank would have printed and carried on from (warnings.warn),
// its message's lines indented under it.
void write_warnings(std::ostream& out, const models::RunResult& r) {
  if (r.warnings.empty()) return;
  fmt::print(out, "\nW={}: warned (the first warning on each rank that printed one):\n", r.world_size);
  for (const models::RankWarning& w : r.warnings) {
    std::string message = w.message;
    for (std::size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 1)) {
      message.replace(at, 1, "\n      ");
    }
    fmt::print(out, "  rank {}, iteration {}: {}\n", w.rank, w.iteration, message);
  }
}

void write_failure(std::ostream& out, const models::RunResult& r) {
  if (r.failure) {
    const models::FailureReport& f = *r.failure;
    fmt::print(out, "\nW={}: {}", r.world_size, models::to_string(r.outcome));
    if (f.detected_at_ms) fmt::print(out, ", detected at {:.3f} ms", *f.detected_at_ms);
    fmt::print(out, " ({})\n", f.detection);
    if (f.sequence) {
      // Ranks that did the same thing at the failing collective, together.
      std::vector<std::pair<std::string, std::vector<int>>> groups;
      for (const models::RankAtFailure& a : f.ranks) {
        const std::string what = a.state == models::RankState::kIssued
                                     ? fmt::format("issued {} ({} {} bytes)", a.op, a.collective, a.bytes)
                                     : fmt::format("{}: {}", models::to_string(a.state), a.detail);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
        if (it == groups.end()) it = groups.insert(groups.end(), {what, {}});
        it->second.push_back(a.rank);
      }
      fmt::print(out, "  collective_seq_id {}:\n", *f.sequence + 1);
      for (const auto& [what, ranks] : groups) fmt::print(out, "    {} {}\n", rank_list(ranks), what);
      fmt::print(out, "  waiting: {}; missing: {}\n", rank_list(f.waiting_ranks), rank_list(f.missing_ranks));
    }
    if (f.culprit_rank >= 0) fmt::print(out, "  culprit: rank {}: {}\n", f.culprit_rank, f.reason);
    if (!f.fix.empty()) fmt::print(out, "  fix: {}\n", f.fix);
  }
  if (!r.misalignments.empty()) {
    const models::MisalignedPair& m = r.misalignments.front();
    fmt::print(
        out,
        "{}W={}: {} collective(s) completed silently misaligned; the first, collective_seq_id {}: rank {}'s {} of "
        "iteration {} was averaged with rank {}'s {} of iteration {}\n",
        r.failure ? "  " : "\n", r.world_size, r.misalignments.size(), m.sequence + 1, m.rank, m.op, m.iteration,
        m.with_rank, m.with_op, m.with_iteration);
  }
}

ordered_json failure_json(const models::FailureReport& f) {
  ordered_json ranks = ordered_json::array();
  for (const models::RankAtFailure& a : f.ranks) {
    ordered_json j{{"rank", a.rank}, {"state", models::to_string(a.state)}};
    if (a.state == models::RankState::kIssued || !a.op.empty()) {
      j["op"] = a.op;
      j["collective"] = a.collective;
      j["bytes"] = a.bytes;
      j["dtype"] = a.dtype.empty() ? ordered_json(nullptr) : ordered_json(a.dtype);
      j["iteration"] = a.iteration;
      j["bucket"] = a.bucket < 0 ? ordered_json(nullptr) : ordered_json(a.bucket);
    }
    if (!a.detail.empty()) j["detail"] = a.detail;
    ranks.push_back(std::move(j));
  }
  return {{"sequence", f.sequence ? ordered_json(*f.sequence) : ordered_json(nullptr)},
          {"collective_seq_id", f.sequence ? ordered_json(*f.sequence + 1) : ordered_json(nullptr)},
          {"ranks", std::move(ranks)},
          {"waiting_ranks", f.waiting_ranks},
          {"missing_ranks", f.missing_ranks},
          {"culprit_rank", f.culprit_rank < 0 ? ordered_json(nullptr) : ordered_json(f.culprit_rank)},
          {"reason", f.reason},
          {"fix", f.fix},
          {"detected_at_ms", f.detected_at_ms ? ordered_json(ms6(*f.detected_at_ms)) : ordered_json(nullptr)},
          {"detection", f.detection}};
}

double s6(sim::Time t) {
  return std::round(t.ms() * 1e3) / 1e6;
}  // seconds, to the microsecond

ordered_json recovery_json(const models::Recovery& r) {
  return {{"at_hours", ratio6(r.at_hours)}, {"detection_s", s6(r.detection)}, {"relaunch_s", s6(r.relaunch)},
          {"reload_s", s6(r.reload)},       {"recompute_s", s6(r.recompute)}, {"total_s", s6(r.total())},
          {"fell_back", r.fell_back}};
}

ordered_json resilience_json(const SweepRow& row) {
  ordered_json j;
  if (row.restarts) {
    const models::RestartReport& r = *row.restarts;
    ordered_json recs = ordered_json::array();
    sim::Time lost, down;
    for (const models::Recovery& rec : r.recoveries) {
      recs.push_back(recovery_json(rec));
      lost += rec.recompute;
      down += rec.total();
    }
    j["failures"] = {{"horizon_hours", r.horizon_hours},
                     {"job_mtbf_minutes", ratio6(r.job_mtbf_minutes)},
                     {"count", r.recoveries.size()},
                     {"lost_work_hours", ratio6(lost.ms() / 3.6e6)},
                     {"recovery_hours", ratio6(down.ms() / 3.6e6)},
                     {"checkpoint_stall_hours", ratio6(r.checkpoint_hours)},
                     {"useful_hours", ratio6(r.useful_hours)},
                     {"goodput", ratio6(r.goodput)},
                     {"expected_goodput", ratio6(r.expected_goodput_at_interval)},
                     {"young_interval_min", ratio6(r.young_minutes)},
                     {"daly_interval_min", ratio6(r.daly_minutes)},
                     {"best_interval_min", ratio6(r.best_minutes)},
                     {"expected_goodput_at_best", ratio6(r.expected_goodput_at_best)},
                     {"recoveries", std::move(recs)}};
  }
  if (row.crash_recovery) {
    const CrashRecovery& c = *row.crash_recovery;
    ordered_json k = recovery_json(c.recovery);
    k["budget_min"] = c.budget_min;
    k["within_budget"] = c.within_budget;
    k["max_watchdog_s"] = ratio6(c.max_watchdog_s);
    j["crash_recovery"] = std::move(k);
  }
  if (row.elastic) {
    const ElasticRestart& e = *row.elastic;
    ordered_json k{{"world_size", e.world_size},
                   {"step_ms", e.step_ms ? ordered_json(ms6(*e.step_ms)) : ordered_json(nullptr)},
                   {"global_batch", e.global_batch},
                   {"lr_scale", ratio6(e.lr_scale)}};
    if (e.resume) {
      std::vector<std::size_t> per_rank;
      for (const auto& r : e.resume->ranks) per_rank.push_back(r.size());
      k["resume"] = {{"consumed", e.resume->consumed},
                     {"remaining_per_rank", per_rank},
                     {"duplicates", e.resume->duplicates},
                     {"omissions", e.resume->omissions}};
    }
    j["elastic"] = std::move(k);
  }
  return j;
}

void write_resilience(std::ostream& out, const SweepRow& row) {
  const int w = row.run.world_size;
  if (row.crash_recovery) {
    const CrashRecovery& c = *row.crash_recovery;
    const models::Recovery& r = c.recovery;
    fmt::print(out,
               "\nW={}: restart after the crash at {:.1f} min: {:.1f} min = detection {:.1f} s + relaunch {:.1f} s + "
               "reload {:.1f} s + recompute {:.1f} s; budget {:g} min: {}\n",
               w, r.at_hours * 60, r.total().ms() / 60000, r.detection.ms() / 1000, r.relaunch.ms() / 1000,
               r.reload.ms() / 1000, r.recompute.ms() / 1000, c.budget_min, c.within_budget ? "met" : "MISSED");
    fmt::print(out,
               "  a watchdog detecting it would have to fire within {:.0f} s to meet the budget "
               "(PyTorch's NCCL default is 600 s, 1800 s before 2.2)\n",
               c.max_watchdog_s);
  }
  if (row.restarts) {
    const models::RestartReport& r = *row.restarts;
    sim::Time lost;
    for (const auto& rec : r.recoveries) lost += rec.recompute;
    fmt::print(out,
               "\nW={}: over {:g} h, {} failure(s) (job MTBF {:.0f} min): {:.2f} h of work lost, goodput {:.1f}% "
               "(expected {:.1f}%)\n",
               w, r.horizon_hours, r.recoveries.size(), r.job_mtbf_minutes, lost.ms() / 3.6e6, 100 * r.goodput,
               100 * r.expected_goodput_at_interval);
    fmt::print(out,
               "  checkpoint interval: Young {:.1f} min, Daly {:.1f} min, best {:.1f} min (expected goodput {:.1f}%)\n",
               r.young_minutes, r.daly_minutes, r.best_minutes, 100 * r.expected_goodput_at_best);
  }
  if (row.elastic) {
    const ElasticRestart& e = *row.elastic;
    fmt::print(out,
               "  elastic restart on {} ranks: step {} ms, global batch {} (learning rate x {:.3g} by the linear "
               "scaling rule)\n",
               e.world_size, e.step_ms ? fmt::format("{:.1f}", *e.step_ms) : "-", e.global_batch, e.lr_scale);
    if (e.resume) {
      fmt::print(out,
                 "  the epoch resumes after {} examples; the rest are spread over {} ranks: {} duplicate(s), "
                 "{} omission(s)\n",
                 e.resume->consumed, e.world_size, e.resume->duplicates.size(), e.resume->omissions.size());
    }
  }
}

}  // namespace

std::string buckets_to_json(const Scenario& scenario) {
  // ddpsim buckets: the scenario's DDP buckets, whatever its parallelism (they do not depend on W).
  const models::DdpJob& job = scenario.job;
  ProgramSummary p;
  p.initial_buckets = models::initial_buckets(job.model, job.ddp);
  p.rebuilt_buckets = models::rebuilt_buckets(job.model, job.ddp);
  p.rebuild_iteration = models::rebuild_iteration(job.ddp);
  return buckets_json(job, p).dump(2) + "\n";
}

std::string sampler_to_json(const models::SamplerAudit& audit) {
  return sampler_json(audit).dump(2) + "\n";
}

void write_buckets(std::ostream& out, const Scenario& scenario) {
  const models::DdpJob& job = scenario.job;
  const auto print = [&](const std::vector<models::Bucket>& buckets) {
    fmt::print(out, "  {:<7}{:>13}  {:>9}  {:<10}{:<8}{}\n", "bucket", "bytes", "MiB", "dtype", "params",
               "first .. last");
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const auto& b = buckets[i];
      fmt::print(out, "  {:<7}{:>13}  {:>9.3f}  {:<10}{:<8}{} .. {}\n", i, b.bytes,
                 static_cast<double>(b.bytes) / models::kMiB, models::to_string(b.dtype), b.params.size(),
                 job.model.parameters[static_cast<std::size_t>(b.params.front())].name,
                 job.model.parameters[static_cast<std::size_t>(b.params.back())].name);
    }
  };
  fmt::print(out, "{}: {}\n", scenario.name, scenario.model_description);
  fmt::print(out, "bucket_cap_mb {:g} ({} bytes), first bucket {} bytes\n\n",
             static_cast<double>(job.ddp.bucket_cap_bytes) / models::kMiB, job.ddp.bucket_cap_bytes,
             job.ddp.first_bucket_bytes);
  fmt::print(out, "initial buckets (construction):\n");
  print(models::initial_buckets(job.model, job.ddp));
  const auto rebuilt = models::rebuilt_buckets(job.model, job.ddp);
  if (rebuilt) {
    fmt::print(out, "\nrebuilt buckets (gradient-ready order, from iteration {}):\n",
               *models::rebuild_iteration(job.ddp));
    print(*rebuilt);
  } else {
    fmt::print(out, "\nno rebuild: find_unused_parameters without static_graph keeps the initial buckets\n");
  }
}

void write_sampler_audit(std::ostream& out, const models::SamplerAudit& a, bool show_ids) {
  const auto& c = a.config;
  fmt::print(out, "DistributedSampler: {} examples, {} ranks, shuffle {}, drop_last {}, batch {}\n", c.dataset_size,
             c.world_size, c.shuffle, c.drop_last, a.batch_size);
  fmt::print(out, "num_samples {} per rank, total_size {}\n", models::num_samples(c), models::total_size(c));
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    const auto& ea = a.epochs[e];
    fmt::print(out, "\nepoch {} (shuffle seed {}){}: {} duplicate(s), {} omission(s)\n", e, ea.epoch_seed,
               ea.same_order_as_previous ? ", same order as the previous epoch" : "", ea.duplicates.size(),
               ea.omissions.size());
    if (!ea.duplicates.empty()) fmt::print(out, "  duplicates: {}\n", fmt::join(ea.duplicates, " "));
    if (!ea.omissions.empty()) fmt::print(out, "  omissions: {}\n", fmt::join(ea.omissions, " "));
    fmt::print(out, "  {:<6}{:<9}{:<9}{:<12}{}\n", "rank", "samples", "batches", "last_batch", show_ids ? "ids" : "");
    for (std::size_t r = 0; r < ea.ranks.size(); ++r) {
      const auto& re = ea.ranks[r];
      fmt::print(out, "  {:<6}{:<9}{:<9}{:<12}{}\n", r, re.ids.size(), re.batches, re.last_batch_size,
                 show_ids ? fmt::format("{}", fmt::join(re.ids, " ")) : "");
    }
  }
  for (const std::string& w : a.warnings) fmt::print(out, "\nwarning: {}\n", w);
}

void write_table(std::ostream& out, const Scenario& scenario, const SweepResult& result) {
  const models::DdpJob& job = scenario.job;
  const std::string iterations = job.epochs == 1 ? fmt::format("{} iterations", job.iterations)
                                                 : fmt::format("{} epochs x {} iterations", job.epochs, job.iterations);
  fmt::print(out, "{}: {} engine{}, seed {}, {} ({} warm-up)\n", scenario.name, result.engine,
             job.backend == models::Backend::kGloo ? " (gloo)" : "", scenario.seed, iterations, job.warmup_iterations);
  if (job.cluster) fmt::print(out, "{}\n", cluster_line(*job.cluster, job));
  if (result.simgrid) {
    const netsim::SimgridStats& s = *result.simgrid;
    fmt::print(out, "SimGrid: {} hosts, {} links; {} {}collectives simulated as {} transfers\n", s.hosts, s.links,
               s.collectives, scenario.simgrid.memoize ? "distinct " : "", s.transfers);
  }
  for (const std::string& c : scenarios::caveats(scenario)) fmt::print(out, "CAVEAT: {}\n", c);
  fmt::print(out, "\n");
  if (result.bucket_sweep) fmt::print(out, "{:<11}", "bucket_mb");
  fmt::print(out, "{:<9}{:<9}{:<13}{:<9}{}\n", "workers", "step_ms", "closed_form", "speedup", "efficiency");
  // 0.1 ms resolution, as the seed's table; finer when some step is under 10 ms.
  int digits = 1;
  for (const SweepRow& row : result.rows) {
    if (row.run.step_ms && *row.run.step_ms < 10) digits = 3;
  }
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    const std::string step = r.step_ms ? fmt::format("{:.{}f}", *r.step_ms, digits) : "-";
    const std::string speedup = row.speedup ? fmt::format("{:.1f}x", *row.speedup) : "-";
    const std::string eff = row.efficiency ? fmt::format("{:.1f}%", *row.efficiency * 100) : "-";
    if (result.bucket_sweep) fmt::print(out, "{:<11}", fmt::format("{:g}", row.bucket_cap_mb));
    const std::string closed = fmt::format("{:.{}f}", row.closed_form_ms, digits);
    using present::cell;
    out << cell(std::to_string(r.world_size), 9) << cell(step, 9) << cell(closed, 13) << cell(speedup, 9) << eff;
    if (r.outcome != models::Outcome::kCompleted) fmt::print(out, "  {}", models::to_string(r.outcome));
    if (row.efficiency && !r.ranks.empty()) {
      double exposed = 0, wait = 0, data = 0;
      for (const models::RankStats& s : r.ranks) exposed += s.exposed_comm_ms, wait += s.wait_ms, data += s.data_ms;
      const auto n = static_cast<double>(r.ranks.size());
      fmt::print(out, "{}", present::low_efficiency_flag(*row.efficiency, exposed / n, wait / n, data / n));
    }
    fmt::print(out, "\n");
  }
  if (scenario.parallelism == Parallelism::kFsdp) {
    fmt::print(out,
               "\nclosed_form: the named baseline, compute + every unit's all-gathers and reduce-scatter "
               "unoverlapped, no simulation (docs/fsdp.md#the-step)\n");
  } else {
    fmt::print(out,
               "\nclosed_form: the named baseline, compute + every bucket's ring all-reduce unoverlapped + the "
               "straggler term, no simulation (docs/cost-models.md)\n");
  }
  if (scenario.parallelism == Parallelism::kDdp && job.ddp.comm_hook.kind != models::CommHookKind::kAllReduce &&
      !result.rows.empty()) {
    write_comm_hook(out, job, result.rows.front().program);  // the first cap's job is the scenario's
  }
  write_busiest_links(out, result);
  if (!result.baseline_in_sweep && !result.rows.empty() && result.rows.front().baseline_ms) {
    fmt::print(out, "\nspeedup = W * t1 / tW, with t1 simulated at W=1{}: {:.{}f} ms\n",
               result.bucket_sweep ? " (first bucket cap)" : "", *result.rows.front().baseline_ms, digits);
  }
  for (const SweepRow& row : result.rows) {
    write_warnings(out, row.run);
    if (row.run.failure || !row.run.misalignments.empty()) write_failure(out, row.run);
    if (!row.run.failure && row.run.outcome == models::Outcome::kCrash && !row.run.errors.empty()) {
      // Out of memory: every rank stops alike; rank 0 speaks for them.
      const models::RankError& e = row.run.errors.front();
      fmt::print(out, "\nW={}: crash at {:.1f} ms on every rank: {}\n", row.run.world_size, e.at_ms, e.message);
    }
    write_resilience(out, row);
  }
}

void write_csv(std::ostream& out, const Scenario& /*scenario: every writer takes it*/, const SweepResult& result) {
  out << "bucket_cap_mb,world_size,outcome,step_ms,speedup,efficiency,global_batch,closed_form_ms\n";
  const auto num = [](const std::optional<double>& v) { return v ? fmt::format("{}", ratio6(*v)) : std::string(); };
  for (const SweepRow& row : result.rows) {
    const auto& r = row.run;
    fmt::print(out, "{},{},{},{},{},{},{},{}\n", row.bucket_cap_mb, r.world_size, models::to_string(r.outcome),
               num(r.step_ms), num(row.speedup), num(row.efficiency), r.global_batch, num(row.closed_form_ms));
  }
}

namespace {

ordered_json ranks_json(const std::vector<models::RankStats>& stats) {
  ordered_json ranks = ordered_json::array();
  for (const models::RankStats& s : stats) {
    ranks.push_back({{"rank", s.rank},
                     {"data_ms", ms6(s.data_ms)},
                     {"compute_ms", ms6(s.compute_ms)},
                     {"collective_ms", ms6(s.collective_ms)},
                     {"exposed_comm_ms", ms6(s.exposed_comm_ms)},
                     {"wait_ms", ms6(s.wait_ms)},
                     {"forward_compute_ms", ms6(s.forward_compute_ms)},
                     {"backward_compute_ms", ms6(s.backward_compute_ms)},
                     {"backward_comm_ms", ms6(s.backward_comm_ms)},
                     {"backward_overlap_ms", ms6(s.backward_overlap_ms)}});
  }
  return ranks;
}

ordered_json blocked_json(const std::vector<sim::BlockedOp>& ops) {
  ordered_json blocked = ordered_json::array();
  for (const sim::BlockedOp& b : ops) {
    ordered_json e{{"rank", b.rank},
                   {"stream", sim::to_string(b.stream)},
                   {"op", models::op_name(b.label)},
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
  return blocked;
}

ordered_json misalignments_json(const std::vector<models::MisalignedPair>& pairs) {
  ordered_json misaligned = ordered_json::array();
  for (const models::MisalignedPair& m : pairs) {
    misaligned.push_back({{"sequence", m.sequence},
                          {"collective_seq_id", m.sequence + 1},
                          {"rank", m.rank},
                          {"op", m.op},
                          {"iteration", m.iteration},
                          {"with_rank", m.with_rank},
                          {"with_op", m.with_op},
                          {"with_iteration", m.with_iteration}});
  }
  return misaligned;
}

// One row of the sweep: its figures, every rank's means, what blocked or failed.
ordered_json run_json(const Scenario& scenario, const SweepRow& row) {
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(ratio6(*v)) : ordered_json(nullptr); };
  const auto& r = row.run;
  ordered_json run;
  run["world_size"] = r.world_size;
  run["bucket_cap_mb"] = row.bucket_cap_mb;
  run["baseline_step_ms"] = opt(row.baseline_ms);
  run["outcome"] = models::to_string(r.outcome);
  run["step_ms"] = opt(r.step_ms);
  run["closed_form_step_ms"] = ratio6(row.closed_form_ms);
  run["speedup"] = opt(row.speedup);
  run["efficiency"] = opt(row.efficiency);
  run["global_batch"] = r.global_batch;
  run["iterations"] = r.iterations;
  run["warmup_iterations"] = scenario.job.warmup_iterations;
  run["measured_iterations"] = r.measured_iterations;
  run["simulated_ms"] = ms6(r.end.ms());
  run["ranks"] = ranks_json(r.ranks);
  // Memory per rank (docs/fsdp.md#memory): every rank's the same today.
  ordered_json memory = ordered_json::array();
  for (int rank = 0; rank < r.world_size; ++rank) {
    ordered_json m{{"rank", rank}};
    m.update(memory_json(row.memory, scenario));
    memory.push_back(std::move(m));
  }
  run["memory"] = std::move(memory);
  run["blocked"] = blocked_json(r.blocked);
  ordered_json errors = ordered_json::array();
  for (const models::RankError& e : r.errors) {
    errors.push_back({{"rank", e.rank}, {"at_ms", ms6(e.at_ms)}, {"message", e.message}});
  }
  run["errors"] = std::move(errors);
  run["failure"] = r.failure ? failure_json(*r.failure) : ordered_json(nullptr);
  run["misalignments"] = misalignments_json(r.misalignments);
  if (!r.warnings.empty()) {
    ordered_json warnings = ordered_json::array();
    for (const models::RankWarning& w : r.warnings) {
      warnings.push_back({{"rank", w.rank}, {"iteration", w.iteration}, {"message", w.message}});
    }
    run["warnings"] = std::move(warnings);
  }
  if (row.restarts || row.crash_recovery || row.elastic) run["resilience"] = resilience_json(row);
  run["iterations_run"] = r.iterations_run;
  run["shadow_collectives"] = r.shadow_collectives;
  run["comm"] = comm_json(row.program);
  if (scenario.engine == "simgrid") run["links"] = links_json(r);
  if (scenario.parallelism == Parallelism::kDdp && row.job->ddp.comm_hook.kind != models::CommHookKind::kAllReduce) {
    run["comm_hook"] = comm_hook_json(*row.job, row.program);
  }
  if (scenario.parallelism == Parallelism::kFsdp) {
    run["fsdp"] = fsdp_layout_json(row.program);
  } else {
    run["buckets"] = buckets_json(*row.job, row.program);
  }
  if (row.sampler) run["sampler"] = sampler_json(*row.sampler);
  return run;
}

}  // namespace

std::string to_json(const Scenario& scenario, const SweepResult& result) {
  ordered_json doc;
  doc["scenario"] = scenario.name;
  doc["engine"] = result.engine;
  if (const auto c = scenarios::caveats(scenario); !c.empty()) doc["caveats"] = c;
  if (scenario.job.cluster) doc["cluster"] = cluster_doc(scenario);
  if (const auto& s = result.simgrid) {
    doc["simgrid"] = {{"hosts", s->hosts},
                      {"links", s->links},
                      {"collectives_simulated", s->collectives},
                      {"transfers", s->transfers}};
  }
  doc["seed"] = scenario.seed;
  // The host is left out on purpose: the same scenario and seed give
  // byte-identical output on any machine (measured results carry their host).
  doc["provenance"] = {
      {"ddpsim_version", sim::ddpsim_version()},
      {"git_commit", sim::git_commit()},
      {"scenario_sha256", scenario.sha256},
      {"calibration", scenario.calibration.empty()
                          ? ordered_json(nullptr)
                          : ordered_json(std::filesystem::path(scenario.calibration).filename().string())},
      {"calibration_sha256",
       scenario.calibration.empty() ? ordered_json(nullptr) : ordered_json(scenario.calibration_sha256)},
      {"seed", scenario.seed}};
  ordered_json runs = ordered_json::array();
  for (const SweepRow& row : result.rows) runs.push_back(run_json(scenario, row));
  doc["runs"] = std::move(runs);
  return doc.dump(2) + "\n";
}

std::string sweep_svg(const Scenario& scenario, const SweepResult& result) {
  std::vector<present::PlotPoint> points;
  for (const SweepRow& row : result.rows) {
    if (row.bucket_cap_mb != result.rows.front().bucket_cap_mb || !row.run.step_ms) continue;  // the first bucket cap
    points.push_back({row.run.world_size, std::nullopt, std::nullopt, row.run.step_ms, row.closed_form_ms, std::nullopt,
                      row.efficiency});
  }
  return present::scaling_svg("Predicted step time and scaling: " + scenario.name, points);
}

}  // namespace ddpsim::report
