#include "sweep/runner.hpp"


#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "models/baseline.hpp"
#include "loader/input_error.hpp"
#include "loader/memory_plan.hpp"
#include "sweep/run_wire.hpp"
#include "sim/time.hpp"
#include "models/fsdp_program.hpp"

namespace ddpsim::scenarios {

namespace {

// Restarts over the horizon, the first crash's recovery and, with an elastic
// restart, the job on the new world size: `elastic`, simulated with the row.
void price_failures(const Scenario& scenario, const models::DdpJob& job, const std::optional<models::RunResult>& elastic,
                    SweepRow& row) {
  const ResilienceSpec& res = scenario.resilience;
  if (!res.checkpoint || !res.failures) return;  // the loader requires a checkpoint with failures
  const models::CheckpointSpec& ck = *res.checkpoint;
  const models::FailureSpec& failures = *res.failures;
  const int w = row.run.world_size;
  row.restarts = models::simulate_restarts(failures, ck, w, scenario.seed);
  if (row.run.errors.empty()) return;
  // The run's first crash: checkpoints every interval of training since the start.
  const double crash_ms = row.run.errors.front().at_ms;
  const sim::Time at = sim::Time::from_ms(crash_ms, "the run's first crash");
  CrashRecovery cr;
  cr.budget_min = res.restart_budget_min;
  models::Recovery& r = cr.recovery;
  r.at_hours = crash_ms / 3.6e6;
  r.detection = failures.detection == models::Detection::kHeartbeat ? failures.heartbeat : job.watchdog_timeout;
  r.relaunch = failures.relaunch;
  r.reload = ck.load_cost();
  r.recompute = sim::Time::ns(at.count_ns() % ck.interval.count_ns());
  cr.within_budget = r.total().ms() <= res.restart_budget_min * 60000;
  cr.max_watchdog_s = (res.restart_budget_min * 60000 - (r.relaunch + r.reload + r.recompute).ms()) / 1000;
  row.crash_recovery = cr;
  if (!failures.restart_world_size || !elastic) return;
  // Elastic: the job resumes from the checkpoint on the new world size.
  ElasticRestart el;
  el.world_size = *failures.restart_world_size;
  el.step_ms = elastic->step_ms;
  el.global_batch = elastic->global_batch;
  el.lr_scale = static_cast<double>(elastic->global_batch) / static_cast<double>(row.run.global_batch);
  if (scenario.sampler && row.run.step_ms) {
    const SamplerSpec& s = *scenario.sampler;
    const models::SamplerConfig old{s.dataset_size, w, s.shuffle, scenario.seed, s.drop_last};
    // Steps finished at the checkpoint it resumes from, within the epoch.
    const auto steps = static_cast<std::int64_t>((crash_ms - r.recompute.ms()) / *row.run.step_ms);
    const std::int64_t per_epoch = models::num_samples(old) / job.local_batch_size;
    const std::int64_t epoch = per_epoch > 0 ? steps / per_epoch : 0;
    const std::int64_t in_epoch = per_epoch > 0 ? steps % per_epoch : 0;
    el.resume = models::resume_epoch(models::epoch_order(old, epoch), s.dataset_size,
                                     in_epoch * job.local_batch_size * w, el.world_size);
  }
  row.elastic = std::move(el);
}

// Runs task(0) .. task(n-1) on `threads` threads (the calling one among
// them); each task writes only its own result, so the output does not depend
// on the thread count. The first exception is rethrown. `progress`, if
// given, hears of each task done, one call at a time; false from it stops
// the tasks not yet started and throws Cancelled.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task,
                  const ProgressFn& progress = {}) {
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;  // guarded by mutex
  std::mutex mutex;
  std::exception_ptr failure;
  bool cancelled = false;
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
      if (progress) {
        // Counted under the lock: the callback hears 1, 2, ... n in order, whichever thread finished.
        const std::lock_guard lock(mutex);
        const std::size_t d = ++done;
        if (!cancelled && !progress(d, n)) {
          cancelled = true;
          next = n;
        }
      }
    }
  };
  const auto count = static_cast<std::size_t>(std::max(1, threads));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(count, n); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (cancelled) throw Cancelled();
}

// Every row of the sweep, collectives timed by `timer` (null: the analytic
// engine), on `threads` threads (one with a trace or a timer: the trace is
// written in row order, and SimGrid runs in one actor).
// The run as PyTorch would end it when the memory a rank needs is above the
// device's: every rank fails at its first peak, the start of iteration 0's
// backward (DDP; after construction's broadcasts, which are not counted).
models::RunResult out_of_memory(const models::RunResult& simulated, const models::DdpJob& job,
                                const models::MemoryEstimate& m, std::int64_t capacity) {
  models::RunResult r;
  r.world_size = simulated.world_size;
  r.outcome = models::Outcome::kCrash;
  r.global_batch = simulated.global_batch;
  r.iterations = simulated.iterations;
  r.fast_path = simulated.fast_path;
  r.levelized = simulated.levelized;
  const double at_ms = (job.data_load + job.model.forward_total()).ms();
  for (int rank = 0; rank < r.world_size; ++rank) {
    r.errors.push_back({rank, at_ms, models::out_of_memory_message(rank, m.peak(), capacity, m.peak_at)});
  }
  r.iterations_run.assign(static_cast<std::size_t>(r.world_size), 1);
  r.shadow_collectives.assign(static_cast<std::size_t>(r.world_size), 0);
  r.end = job.data_load + job.model.forward_total();
  return r;
}

// The scenario's program on `w` ranks: DDP, or FSDP over the same job.
models::RunResult simulate(const Scenario& scenario, const models::DdpJob& job, int w, const exec::ExecutionPolicy& policy,
                           sim::Observer* trace) {
  if (scenario.parallelism == Parallelism::kFsdp) {
    return exec::evaluate(models::FsdpProgram(job, *scenario.fsdp), w, scenario.seed, policy, trace);
  }
  return exec::simulate_ddp(job, w, scenario.seed, policy, trace);
}

double closed_form_ms(const Scenario& scenario, const models::DdpJob& job, int w) {
  if (scenario.parallelism == Parallelism::kDdp) return models::closed_form_step_ms(job, w);
  const auto timer = models::analytic_timer(job, w);
  return models::fsdp_closed_form_ms(job, *scenario.fsdp, w, job.cluster ? job.cluster->gpus_per_node : w, *timer);
}

// The simulations of a sweep, by task: row i = (cap i / W count, W i % W
// count) and, when that row crashes and the scenario restarts elastically,
// the job at the new world size; then each cap's W = 1 baseline when the
// sweep lacks it. A process of a partition fills the tasks it owns.
struct Simulations {
  std::vector<models::RunResult> rows;
  std::vector<std::optional<models::RunResult>> elastic;  // per row
  std::vector<std::optional<models::RunResult>> baselines;  // per cap
  std::vector<std::vector<std::pair<std::string, std::string>>> recorded;  // per row: RecordFailed's files
  std::optional<netsim::SimgridStats> simgrid;
};

// The world size a task simulates: row i's, or 1 for a cap's baseline.
int task_world_size(const SweepAxes& axes, std::size_t task) {
  const std::size_t rows = axes.bucket_caps_mb.size() * axes.world_sizes.size();
  return task < rows ? axes.world_sizes[task % axes.world_sizes.size()] : 1;
}

// The process that simulates each of `tasks` tasks: units of work dealt,
// largest first, each to the process with the least so far (a unit costs
// its world size per task). A unit is a task, except with the SimGrid
// engine, whose statistics count the distinct collectives simulated: there
// a unit is every task of one world size, so each is simulated once, as one
// process would. Where a row also simulates a second world size (an
// elastic restart's; hybrid sharding's node-sized shard groups) the first
// process takes them all.
std::vector<int> assign_tasks(const Scenario& scenario, const SweepAxes& axes, std::size_t tasks, const Partition& part) {
  std::vector<int> owners(tasks, 0);
  const bool simgrid = scenario.engine == "simgrid";
  const bool second_size = (scenario.resilience.failures && scenario.resilience.failures->restart_world_size) ||
                           (scenario.fsdp && models::is_hybrid(scenario.fsdp->sharding));
  if (part.count <= 1 || (simgrid && second_size)) return owners;
  std::map<std::int64_t, std::vector<std::size_t>> units;  // key: world size (SimGrid) or task
  for (std::size_t t = 0; t < tasks; ++t) units[simgrid ? task_world_size(axes, t) : static_cast<std::int64_t>(t)].push_back(t);
  std::vector<std::pair<std::int64_t, const std::vector<std::size_t>*>> order;  // (cost, tasks)
  for (const auto& [key, members] : units) {
    order.emplace_back(static_cast<std::int64_t>(members.size()) * task_world_size(axes, members.front()), &members);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::int64_t> load(static_cast<std::size_t>(part.count), 0);
  for (const auto& [cost, members] : order) {
    const auto p = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[p] += cost;
    for (std::size_t t : *members) owners[t] = static_cast<int>(p);
  }
  return owners;
}

// This process's place in a split sweep: its partition and the process of each task.
struct Share {
  const Partition& part;
  std::vector<int> owners;
};

Simulations simulate_tasks(const Scenario& scenario, const SweepAxes& axes, const std::vector<std::shared_ptr<const models::DdpJob>>& jobs,
                           sim::ChromeTraceWriter* trace, int threads, const exec::ExecutionPolicy& policy,
                           const Share& share, const SweepHooks& hooks) {
  const Partition& part = share.part;
  const std::vector<int>& owners = share.owners;
  const std::size_t caps = axes.bucket_caps_mb.size(), sizes = axes.world_sizes.size(), rows = caps * sizes;
  Simulations out;
  out.rows.resize(rows);
  out.elastic.resize(rows);
  out.recorded.resize(rows);
  out.baselines.resize(caps);
  const bool bucket_sweep = caps > 1;
  const std::optional<int> restart_w =
      scenario.resilience.failures ? scenario.resilience.failures->restart_world_size : std::nullopt;
  parallel_for(owners.size(), threads, [&](std::size_t i) {
    const std::size_t c = i < rows ? i / sizes : i - rows;
    const int w = task_world_size(axes, i);
    if (owners[i] != part.index) return;
    if (i >= rows) {
      out.baselines[c] = simulate(scenario, *jobs[c], 1, policy, nullptr);
      return;
    }
    if (trace != nullptr) {
      const double cap = axes.bucket_caps_mb[c];
      trace->begin_run(bucket_sweep ? fmt::format("cap={}MiB W={}", cap, w) : fmt::format("W={}", w), w,
                       memory_track(scenario, w));
    }
    out.rows[i] = simulate(scenario, *jobs[c], w, policy, trace);
    const models::RunResult& run = out.rows[i];
    if (hooks.record && run.outcome != models::Outcome::kCompleted && run.failure) {
      exec::ExecutionPolicy in_time_order;
      in_time_order.timer = policy.timer;
      out.recorded[i] = hooks.record(*jobs[c], run, [&](sim::Observer& observer) {
        return simulate(scenario, *jobs[c], w, in_time_order, &observer);
      });
    }
    if (restart_w && scenario.resilience.checkpoint && !out.rows[i].errors.empty()) {
      models::DdpJob clean = *jobs[c];
      clean.faults.clear();
      out.elastic[i] = exec::simulate_ddp(clean, *restart_w, scenario.seed, policy);
    }
  }, hooks.progress);
  return out;
}

// This process's share of the sweep's simulations, inside the scenario's
// engine. Split on SimGrid, its platform holds the world sizes it simulates
// only (the size limit is the whole sweep's).
Simulations simulate_share(const Scenario& scenario, const SweepAxes& axes,
                           const std::vector<std::shared_ptr<const models::DdpJob>>& jobs, const Share& share,
                           sim::ChromeTraceWriter* trace, int threads, const exec::ExecutionPolicy& policy,
                           const SweepHooks& hooks) {
  SweepAxes engine_axes = axes;
  if (share.part.count > 1 && scenario.engine == "simgrid") {
    check_simgrid_size(scenario, axes);
    engine_axes.world_sizes = {1};
    for (std::size_t t = 0; t < share.owners.size(); ++t) {
      if (share.owners[t] == share.part.index) engine_axes.world_sizes.push_back(task_world_size(axes, t));
    }
  }
  Simulations sims;
  with_timer(
      scenario, engine_axes,
      [&](models::CollectiveTimer* timer) {
        // One thread with a trace or a timer: the trace is written in row order, SimGrid runs in one actor.
        const int sim_threads = trace != nullptr || timer != nullptr ? 1 : threads;
        exec::ExecutionPolicy p = policy;
        // Threads the rows large enough to share theirs (ExecutionPolicy::threads) do not take.
        const auto large = std::count_if(axes.world_sizes.begin(), axes.world_sizes.end(),
                                         [](int w) { return w >= 2 * exec::kRanksPerEngineThread; });
        p.threads = std::max(1, sim_threads / std::max(1, static_cast<int>(large * static_cast<long>(jobs.size()))));
        p.timer = timer;
        sims = simulate_tasks(scenario, axes, jobs, trace, sim_threads, p, share, hooks);
      },
      &sims.simgrid);
  return sims;
}

// Every process's simulations on the first (elsewhere: false); one that
// failed (`failed`) sends its error instead, which the first raises. Tags:
// row i is i, its elastic restart rows + i, cap c's baseline 2 rows + c.
// A process's error travels as text; bad input (an InputError, a time out of
// range) is tagged so that the first process raises it as bad input (exit 2).
constexpr std::string_view kInputTag = "input:";

bool gather_simulations(const Partition& part, Simulations& sims, const std::exception_ptr& failed,
                        const std::string& source) {
  ProcessShare mine;
  if (failed) {
    try {
      std::rethrow_exception(failed);
    } catch (const InputError& e) {
      mine.error = std::string(kInputTag) + e.what();
    } catch (const sim::TimeRangeError& e) {
      mine.error = fmt::format("{}{}: {}: expected values whose simulated times fit; lower the keys named", kInputTag,
                               source, e.what());
    } catch (const std::exception& e) {
      mine.error = e.what();
    } catch (...) {
      mine.error = "an unknown exception";
    }
  }
  const std::size_t rows = sims.rows.size();
  for (std::size_t i = 0; i < rows; ++i) {
    if (sims.rows[i].world_size > 0) mine.runs.emplace_back(i, std::move(sims.rows[i]));
    if (sims.elastic[i]) mine.runs.emplace_back(rows + i, std::move(*sims.elastic[i]));
    if (!sims.recorded[i].empty()) mine.recorded.emplace_back(i, std::move(sims.recorded[i]));
  }
  for (std::size_t c = 0; c < sims.baselines.size(); ++c) {
    if (sims.baselines[c]) mine.runs.emplace_back(2 * rows + c, std::move(*sims.baselines[c]));
  }
  mine.simgrid = sims.simgrid;
  const std::vector<std::string> parts = part.gather(encode_share(mine));
  if (part.index != 0) return false;
  if (failed) return true;  // the caller raises this process's own error; the others' runs have no rows to go to
  for (std::size_t p = 0; p < parts.size(); ++p) {
    ProcessShare share = decode_share(parts[p]);
    if (!share.error.empty() && !failed) {
      if (share.error.starts_with(kInputTag)) throw InputError::relayed(share.error.substr(kInputTag.size()));
      throw std::runtime_error(fmt::format("MPI process {}: {}", p, share.error));
    }
    for (auto& [tag, run] : share.runs) {
      if (tag < rows) {
        sims.rows[tag] = std::move(run);
      } else if (tag < 2 * rows) {
        sims.elastic[tag - rows] = std::move(run);
      } else {
        sims.baselines.at(tag - 2 * rows) = std::move(run);
      }
    }
    for (auto& [row, files] : share.recorded) sims.recorded.at(row) = std::move(files);
    if (p > 0 && share.simgrid && sims.simgrid) {  // the largest platform is one process's
      sims.simgrid->collectives += share.simgrid->collectives;
      sims.simgrid->transfers += share.simgrid->transfers;
      sims.simgrid->hosts = std::max(sims.simgrid->hosts, share.simgrid->hosts);
      sims.simgrid->links = std::max(sims.simgrid->links, share.simgrid->links);
    }
  }
  return true;
}

// A simulated row as reported: failures priced, the closed form, memory
// (and the out-of-memory end where it does not fit), the sampler's audit.
SweepRow finish_row(const Scenario& scenario, std::shared_ptr<const models::DdpJob> job, double cap, models::RunResult run,
                    const std::optional<models::RunResult>& elastic) {
  const int w = run.world_size;
  SweepRow row{std::move(run), std::move(job), {}, cap, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  price_failures(scenario, *row.job, elastic, row);
  row.closed_form_ms = closed_form_ms(scenario, *row.job, w);
  row.memory = predict_memory(scenario, w);
  row.program = summarize_program(scenario, *row.job, w);
  if (scenario.memory.device_bytes && row.memory.peak() > *scenario.memory.device_bytes) {
    row.run = out_of_memory(row.run, *row.job, row.memory, *scenario.memory.device_bytes);
    row.restarts.reset();
    row.crash_recovery.reset();
    row.elastic.reset();
  }
  if (scenario.sampler) {
    const SamplerSpec& s = *scenario.sampler;
    row.sampler = models::audit_sampler({s.dataset_size, w, s.shuffle, scenario.seed, s.drop_last}, row.job->local_batch_size,
                                        s.epochs, s.set_epoch);
  }
  return row;
}

// The report's rows from the simulations: each finished, then speedup and
// efficiency against its cap's baseline.
void finish_rows(const Scenario& scenario, const SweepAxes& axes, const std::vector<std::shared_ptr<const models::DdpJob>>& jobs,
                 Simulations& sims, int threads, SweepResult& out) {
  const std::size_t caps = axes.bucket_caps_mb.size(), sizes = axes.world_sizes.size();
  out.rows.resize(caps * sizes);
  parallel_for(out.rows.size(), threads, [&](std::size_t i) {
    const std::size_t c = i / sizes;
    out.rows[i] = finish_row(scenario, jobs[c], axes.bucket_caps_mb[c], std::move(sims.rows[i]), sims.elastic[i]);
    out.rows[i].recorded = std::move(sims.recorded[i]);
  });
  const auto one = std::find(axes.world_sizes.begin(), axes.world_sizes.end(), 1);
  for (std::size_t c = 0; c < caps; ++c) {
    const std::size_t first = c * sizes;
    const std::optional<double> t1 =
        out.baseline_in_sweep ? out.rows[first + static_cast<std::size_t>(one - axes.world_sizes.begin())].run.step_ms
                              : sims.baselines[c]->step_ms;
    for (std::size_t i = first; i < first + sizes; ++i) {
      SweepRow& row = out.rows[i];
      row.baseline_ms = t1;
      const auto& r = row.run;
      // A zero step (no compute, nothing to send) has no speed-up to speak of: left out, not 0/0.
      if (!t1 || !r.step_ms || *r.step_ms <= 0 || r.outcome != models::Outcome::kCompleted) continue;
      row.efficiency = *t1 / *r.step_ms;
      row.speedup = r.world_size * *row.efficiency;
    }
  }
}

}  // namespace

void check_engine(const Scenario& scenario) {
  if (scenario.engine == "simgrid" && scenario.job.collective_model == models::CollectiveModel::kNccl) {
    throw InputError({scenario.source, 0, 0}, "engine", "'simgrid'",
                     "expected the analytic engine with collective.model nccl (NCCL's model prices collectives "
                     "analytically; SimGrid times the ring's transfers)");
  }
}

std::vector<int> world_sizes_needed(const Scenario& scenario, const SweepAxes& axes) {
  std::vector<int> sizes = axes.world_sizes;
  sizes.push_back(1);  // the baseline
  if (scenario.resilience.failures && scenario.resilience.failures->restart_world_size) {
    sizes.push_back(*scenario.resilience.failures->restart_world_size);
  }
  if (scenario.fsdp && models::is_hybrid(scenario.fsdp->sharding) && scenario.job.cluster) {
    sizes.push_back(scenario.job.cluster->gpus_per_node);  // a shard group is priced as one node's ring
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void check_simgrid_size(const Scenario& scenario, const SweepAxes& axes) {
  const std::vector<int> sizes = world_sizes_needed(scenario, axes);
  if (sizes.back() > kMaxSimgridRanks) {
    throw InputError({scenario.source, 0, 0}, "world_size", std::to_string(sizes.back()),
                     fmt::format("expected at most {} ranks with the SimGrid engine (its routing table grows with W^2: "
                                 "2.2 GB at 16,384; bench/engines.sh)",
                                 kMaxSimgridRanks));
  }
}

void with_timer(const Scenario& scenario, const SweepAxes& axes, const std::function<void(models::CollectiveTimer*)>& body,
                std::optional<netsim::SimgridStats>* stats) {
  check_engine(scenario);
  if (scenario.engine != "simgrid") return body(nullptr);
  check_simgrid_size(scenario, axes);
  const std::vector<int> sizes = world_sizes_needed(scenario, axes);
  const models::DdpJob& job = scenario.job;
  const models::ClusterSpec cluster = job.cluster ? *job.cluster : models::single_switch(sizes.back(), job.network);
  // Hybrid sharding's replica groups, priced all at once; on PCIe nodes with
  // the shard groups (a node each), whose rings share the GPUs' links.
  std::vector<std::vector<int>> groups;
  if (scenario.fsdp && models::is_hybrid(scenario.fsdp->sharding) && job.cluster) {
    const int g = job.cluster->gpus_per_node;
    for (int w : sizes) {
      for (std::vector<int>& r : models::replica_groups(w, g)) groups.push_back(std::move(r));
      for (int node = 0; node < w / g && w > g && models::nic_routes_cross_gpu_links(*job.cluster); ++node) {
        std::vector<int> shard(static_cast<std::size_t>(g));
        for (int i = 0; i < g; ++i) shard[static_cast<std::size_t>(i)] = node * g + i;
        groups.push_back(std::move(shard));
      }
    }
  }
  const netsim::SimgridStats s = netsim::run_with_simgrid(cluster, job.network.launch_overhead, job.algorithm, sizes,
                                                          scenario.simgrid, [&](models::CollectiveTimer& t) { body(&t); }, groups,
                                                          models::broadcast_of(job.backend));
  if (stats != nullptr) *stats = s;
}

SweepResult run_scenario(const Scenario& scenario, sim::ChromeTraceWriter* trace, int threads,
                         const exec::ExecutionPolicy& policy, const Partition& partition, const SweepHooks& hooks) {
  return run_sweep(scenario, scenario.sweep, trace, threads, policy, partition, hooks);
}

namespace {
SweepResult sweep_rows(const Scenario& scenario, const SweepAxes& axes, sim::ChromeTraceWriter* trace, int threads,
                       const exec::ExecutionPolicy& policy, const Partition& partition, const SweepHooks& hooks);
}  // namespace

SweepResult run_sweep(const Scenario& scenario, const SweepAxes& axes, sim::ChromeTraceWriter* trace, int threads,
                      const exec::ExecutionPolicy& policy, const Partition& partition, const SweepHooks& hooks) {
  try {
    return sweep_rows(scenario, axes, trace, threads, policy, partition, hooks);
  } catch (const sim::TimeRangeError& e) {
    // A sum is the run's clock or a step's parts added up: name what drives them.
    const bool sum = e.quantity().rfind("a sum", 0) == 0 || e.quantity().rfind("a difference", 0) == 0;
    throw InputError({scenario.source, 0, 0}, "", "",
                     fmt::format("{}{}: expected values whose simulated times fit; lower the keys named", e.what(),
                                 sum ? " (the run's clock: training.iterations x the step's time from the model: "
                                       "and collective: keys)"
                                     : ""));
  }
}

namespace {

SweepResult sweep_rows(const Scenario& scenario, const SweepAxes& axes, sim::ChromeTraceWriter* trace, int threads,
                       const exec::ExecutionPolicy& policy, const Partition& partition, const SweepHooks& hooks) {
  if (scenario.fsdp && models::is_hybrid(scenario.fsdp->sharding)) {
    // HYBRID_SHARD shards within a node and replicates across nodes: whole nodes only.
    const int per_node = scenario.job.cluster ? scenario.job.cluster->gpus_per_node : 0;
    for (int w : axes.world_sizes) {
      if (per_node == 0 || (w > per_node && w % per_node != 0)) {
        throw InputError(scenario.fsdp_strategy_at, "fsdp.sharding_strategy",
                         std::string(models::to_string(scenario.fsdp->sharding)),
                         per_node == 0 ? "expected a cluster section: hybrid sharding shards within a node"
                                       : fmt::format("expected world sizes of whole nodes ({} GPUs each): {} is not", per_node, w));
      }
    }
  }
  SweepResult out;
  out.bucket_sweep = axes.bucket_caps_mb.size() > 1;
  out.baseline_in_sweep = std::find(axes.world_sizes.begin(), axes.world_sizes.end(), 1) != axes.world_sizes.end();
  // A trace is written in row order by one process: the others leave it the sweep.
  const Partition whole;
  const Partition& part = trace != nullptr ? whole : partition;
  if (trace != nullptr && partition.index != 0) {
    out.complete = false;
    return out;
  }
  std::vector<std::shared_ptr<const models::DdpJob>> jobs;
  for (const double cap : axes.bucket_caps_mb) {
    jobs.push_back(std::make_shared<const models::DdpJob>(with_cap(scenario.job, cap)));
  }
  const std::size_t tasks = jobs.size() * axes.world_sizes.size() + (out.baseline_in_sweep ? 0 : jobs.size());
  const Share share{part, assign_tasks(scenario, axes, tasks, part)};
  Simulations sims;
  // Split, a process that fails still hands its share to the gather (or the others would wait on it).
  std::exception_ptr failed;
  try {
    sims = simulate_share(scenario, axes, jobs, share, trace, threads, policy, hooks);
    out.engine = scenario.engine == "simgrid" ? "simgrid" : "analytic";
  } catch (...) {
    if (part.count <= 1) throw;
    failed = std::current_exception();
  }
  if (part.count > 1) {
    const bool first = gather_simulations(part, sims, failed, scenario.source);
    if (failed) std::rethrow_exception(failed);
    if (!first) {
      out.complete = false;
      return out;
    }
  }
  out.simgrid = sims.simgrid;
  finish_rows(scenario, axes, jobs, sims, threads, out);
  return out;
}

}  // namespace

}  // namespace ddpsim::scenarios
