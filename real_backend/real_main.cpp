// ddpsim-real: the real data-parallel trainer. Launch with
//   mpirun -np W build/real_backend/ddpsim-real train [options]
// (as root OpenMPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and --oversubscribe past the core count).
// Exit codes: 0 done, 2 usage, 1 internal error.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "formats/measured_run.hpp"
#include "real_backend/mpi_transport.hpp"
#include "real_backend/network_rank.hpp"
#include "real_backend/nccl_transport.hpp"
#include "real_backend/overlap.hpp"
#include "real_backend/trainer.hpp"
#include "models/ddp_job.hpp"
#include "present/efficiency.hpp"
#include "sim/build_info.hpp"

namespace {

using ddpsim::real::TrainerOptions;

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CLI::ValidationError("cannot read " + path);
  std::vector<float> v;
  float f;
  while (in.read(reinterpret_cast<char*>(&f), sizeof f)) v.push_back(f);
  return v;
}

// ddpsim-real's own files, read through their owner (formats/measured_run.hpp);
// a FormatError becomes a usage error naming the file and the field.
template <class Read>
auto read_or_refuse(const Read& read) {
  try {
    return read();
  } catch (const ddpsim::formats::FormatError& e) {
    throw CLI::ValidationError(fmt::format("{}: {}{}", e.file(), e.key().empty() ? "" : "key '" + e.key() + "': ", e.what()));
  }
}

// Every rank's log of a train --json run.
std::vector<ddpsim::formats::RankLog> read_run(const std::string& prefix) {
  return read_or_refuse([&] { return ddpsim::formats::read_run(prefix); });
}

// The partitioning proof from each rank's example-ID log: per epoch, every
// example once (bar the padding DistributedSampler documents), and a new
// order. Several runs (a run and its resumption, on other world sizes) are
// merged epoch by epoch.
int audit(const std::vector<std::string>& prefixes, std::int64_t dataset_size) {
  std::map<int, std::vector<std::int64_t>> order;  // epoch -> IDs, every rank of every run
  std::map<int, std::int64_t> padding;             // epoch -> duplicates the sampler's padding allows
  for (const std::string& prefix : prefixes) {
    const std::vector<ddpsim::formats::RankLog> logs = read_run(prefix);
    const int world = static_cast<int>(logs.size());
    for (const ddpsim::formats::RankLog& log : logs) {
      for (const ddpsim::formats::MeasuredEpoch& e : log.epochs) {
        const int epoch = e.epoch;
        for (std::int64_t id : e.ids) {
          if (id < 0 || id >= dataset_size) throw CLI::ValidationError(fmt::format("example ID {} out of range", id));
          order[epoch].push_back(id);
        }
        padding[epoch] = std::max(padding[epoch], (world - dataset_size % world) % world);
      }
    }
  }
  bool ok = !order.empty();
  const std::vector<std::int64_t>* previous = nullptr;
  for (const auto& [epoch, ids] : order) {
    std::vector<int> seen(static_cast<std::size_t>(dataset_size), 0);
    for (std::int64_t id : ids) ++seen[static_cast<std::size_t>(id)];
    std::int64_t duplicates = 0, omissions = 0;
    for (int c : seen) {
      duplicates += c > 1 ? c - 1 : 0;
      omissions += c == 0;
    }
    const bool same_order = previous && ids == *previous;
    const bool epoch_ok = duplicates <= padding[epoch] && omissions == 0 && !same_order;
    fmt::print("epoch {}: {} examples seen, {} duplicate(s) (padding allows {}), {} omission(s), {}: {}\n", epoch,
               ids.size(), duplicates, padding[epoch], omissions,
               !previous ? "first epoch" : same_order ? "same order as the previous epoch" : "new order",
               epoch_ok ? "ok" : "FAILED");
    ok = ok && epoch_ok;
    previous = &ids;
  }
  return ok ? 0 : 1;
}

// Throughput and scaling efficiency from train --json runs at several world
// sizes: median step time after two warm-up steps, rank 0's log.
int report(const std::vector<std::string>& prefixes) {
  struct Row {
    int world;
    double step_ms, samples_per_s, exposed_comm_ms, data_ms;
  };
  std::vector<Row> rows;
  for (const std::string& prefix : prefixes) {
    const ddpsim::formats::RankLog log =
        read_or_refuse([&] { return ddpsim::formats::read_rank_log(ddpsim::formats::rank_log_path(prefix, 0)); });
    if (log.batch_size <= 0) throw CLI::ValidationError(log.file + ": no batch_size (a log of an older ddpsim-real?)");
    std::vector<double> steps;
    for (const auto& s : log.steps) steps.push_back(s.step_ms);
    if (steps.size() < 3) throw CLI::ValidationError(prefix + ": fewer than 3 steps logged");
    steps.erase(steps.begin(), steps.begin() + 2);
    double exposed = 0, data = 0;
    read_or_refuse([&] {
      for (std::size_t i = 2; i < log.steps.size(); ++i) {
        exposed += log.need(&ddpsim::formats::MeasuredStep::exposed_comm_ms, "exposed_comm_ms", i);
        data += log.need(&ddpsim::formats::MeasuredStep::data_ms, "data_ms", i);
      }
      return 0;
    });
    std::sort(steps.begin(), steps.end());
    const double median = steps[steps.size() / 2];
    const int world = log.world_size;
    const auto n = static_cast<double>(steps.size());
    rows.push_back({world, median, world * static_cast<double>(log.batch_size) / (median / 1000), exposed / n, data / n});
  }
  const auto one = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.world == 1; });
  fmt::print("{:<9}{:<10}{:<14}{:<9}{}\n", "workers", "step_ms", "samples/s", "speedup", "efficiency");
  for (const Row& r : rows) {
    const std::string speedup = one != rows.end() ? fmt::format("{:.2f}x", r.samples_per_s / one->samples_per_s) : "-";
    const std::string eff =
        one != rows.end() ? fmt::format("{:.1f}%", 100 * r.samples_per_s / (r.world * one->samples_per_s)) : "-";
    // Waiting for other ranks is not separable from the collective on one rank: it counts as exposed communication.
    const std::string flag = one != rows.end() ? ddpsim::present::low_efficiency_flag(
                                                     r.samples_per_s / (r.world * one->samples_per_s), r.exposed_comm_ms, 0, r.data_ms)
                                               : "";
    fmt::print("{:<9}{:<10.3f}{:<14.0f}{:<9}{}{}\n", r.world, r.step_ms, r.samples_per_s, speedup, eff, flag);
  }
  return 0;
}

// rtol 0 asks for bit-identical parameters.
int compare(const std::string& a, const std::string& b, double rtol) {
  const auto x = read_floats(a), y = read_floats(b);
  if (x.size() != y.size() || x.empty()) {
    fmt::print("{} and {} hold {} and {} parameters\n", a, b, x.size(), y.size());
    return 1;
  }
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(static_cast<double>(x[i]) - y[i]) / std::max(1e-3, std::fabs(static_cast<double>(x[i])));
    if (d > worst) worst = d, at = i;
  }
  const bool identical = std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  const bool ok = rtol == 0 ? identical : worst <= rtol;
  fmt::print("{} parameters, largest relative difference {:.3g} (parameter {}), bit-identical: {}, tolerance {:.3g}: {}\n",
             x.size(), worst, at, identical ? "yes" : "no", rtol, ok ? "equal" : "DIFFERENT");
  return ok ? 0 : 1;
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// PREFIX.rank<r>.json (formats/measured_run.hpp): the simulator's per-rank
// field names, per step, plus where and what was measured.
void write_rank_json(const std::string& prefix, const ddpsim::real::Transport& t, const std::string& device,
                     const TrainerOptions& o, const std::string& widths, const ddpsim::real::TrainResult& r) {
  ddpsim::formats::RankLog log;
  log.rank = t.rank();
  log.world_size = t.world_size();
  log.host = host_name();
  log.ddpsim_version = ddpsim::sim::ddpsim_version();
  log.git_commit = ddpsim::sim::git_commit();
  log.device = device;
  log.transport = t.name();
  log.network = ddpsim::real::emulated_network_record();
  if (o.comm_hook != "allreduce") log.comm_hook = o.comm_hook;
  log.sizes = {widths, static_cast<std::int64_t>(r.parameters.size()),
               static_cast<std::int64_t>(r.parameters.size() * sizeof(float)), o.dataset_size, r.bucket_bytes, r.unit_bytes};
  log.parallelism = ddpsim::real::parallelism_name(o.parallelism);
  log.peak_memory_bytes = r.peak_memory_bytes;
  if (!r.steps.empty() && !r.steps.front().layer_forward_ms.empty()) {
    // The layers whose times the steps give, named as the model names its parameters ("layers.0.weight").
    for (const auto& p : ddpsim::real::mlp_spec(o.shape).parameters) {
      const std::string layer = p.name.substr(0, p.name.rfind('.'));
      if (log.layers.empty() || log.layers.back().name != layer) log.layers.push_back({layer, {}});
      log.layers.back().params.push_back(p.name);
    }
  }
  log.batch_size = o.batch_size;
  log.resumed_from_step = r.resumed_from_step;
  for (const auto& e : r.epochs) log.epochs.push_back({e.epoch, e.ids});
  for (const auto& s : r.steps) {
    ddpsim::formats::MeasuredStep m;
    m.iteration = s.iteration;
    m.epoch = s.epoch;
    m.examples = s.examples;
    m.skipped = s.skipped;
    m.step_ms = s.step_ms;
    m.data_ms = s.data_ms;
    m.compute_ms = s.compute_ms;
    m.collective_ms = s.collective_ms;
    m.exposed_comm_ms = s.exposed_comm_ms;
    m.forward_compute_ms = s.forward_compute_ms;
    m.backward_compute_ms = s.backward_compute_ms;
    m.backward_comm_ms = s.backward_comm_ms;
    m.backward_overlap_ms = s.backward_overlap_ms;
    m.optimizer_ms = s.optimizer_ms;
    m.backward_end_clock_ms = s.backward_end_clock_ms;
    m.layer_forward_ms = s.layer_forward_ms;
    m.layer_backward_ms = s.layer_backward_ms;
    log.steps.push_back(std::move(m));
  }
  std::ofstream(ddpsim::formats::rank_log_path(prefix, t.rank())) << ddpsim::formats::to_json(log);
}

// allreduce-sweep: rank 0 prints the table in nccl-tests' columns and writes --json.
int allreduce_sweep_cmd(ddpsim::real::Transport& transport, const std::string& device, const std::string& op,
                        std::int64_t min_bytes, std::int64_t max_bytes, int iters, const std::string& sweep_json) {
  const auto floats = static_cast<std::size_t>(max_bytes / 4 + 1);
  std::vector<float> host(device == "cpu" ? floats : 0, 0.0f);
  ddpsim::real::DeviceBuffer gpu(device == "gpu" ? floats : 0);
  const ddpsim::sim::CollectiveKind kind = op == "all_gather"       ? ddpsim::sim::CollectiveKind::kAllGather
                                           : op == "reduce_scatter" ? ddpsim::sim::CollectiveKind::kReduceScatter
                                           : op == "broadcast"      ? ddpsim::sim::CollectiveKind::kBroadcast
                                                                    : ddpsim::sim::CollectiveKind::kAllReduce;
  const auto rows = ddpsim::real::collective_sweep(transport, kind, device == "cpu" ? host.data() : gpu.data(), min_bytes,
                                                   max_bytes, iters);
  if (transport.rank() == 0) {
    fmt::print("{:>12}  {:>12}  {:>12}  {:>12}   ({}, W = {}, {}, nccl-tests' definitions)\n", "bytes", "time_us",
               "algbw_GBps", "busbw_GBps", op, transport.world_size(), transport.name());
    ddpsim::formats::CollectiveSweep out{"", transport.name(), host_name(), std::string(ddpsim::sim::ddpsim_version()),
                                         std::string(ddpsim::sim::git_commit()), op, transport.world_size(), {},
                                         ddpsim::real::emulated_network_record()};
    for (const auto& r : rows) {
      fmt::print("{:>12}  {:>12.2f}  {:>12.4f}  {:>12.4f}\n", r.bytes, r.time_us, r.algbw_GBps, r.busbw_GBps);
      out.rows.push_back({r.bytes, r.time_us, r.algbw_GBps, r.busbw_GBps});
    }
    if (!sweep_json.empty()) std::ofstream(sweep_json) << ddpsim::formats::to_json(out);
  }
  transport.barrier();
  return 0;
}

// overlap: every rank measures; rank 0 prints the pair and writes --json.
int overlap_cmd(ddpsim::real::Transport& transport, const ddpsim::real::OverlapOptions& o, const std::string& json) {
  ddpsim::formats::OverlapMeasurement m;
  try {
    m = ddpsim::real::measure_overlap(transport, o);
  } catch (const std::invalid_argument& e) {  // one rank: every rank says so before any collective
    if (transport.rank() == 0) fmt::print(stderr, "ddpsim-real: error: {}\n", e.what());
    return 2;
  }
  if (transport.rank() == 0 && !ddpsim::formats::pooled_slowdowns(m.sizes)) {
    fmt::print(stderr, "ddpsim-real: error: overlap: no size ran a chunk beside its all-reduce: larger --mb or a "
                       "smaller --matrix\n");
    transport.barrier();
    return 2;
  }
  if (transport.rank() == 0) {
    for (const auto& s : m.sizes) {
      fmt::print("{:>10} B: chunk {:.4f} ms, all-reduce {:.3f} ms alone, {:.3f} ms beside {:.0f} chunks\n", s.bytes,
                 s.chunk_ms, s.allreduce_ms, s.both_ms, s.chunks_beside);
    }
    fmt::print("overlap: {} ranks, {}: compute_slowdown {:.3g}, comm_slowdown {:.3g}\n", m.world_size, m.backend,
               m.compute_slowdown, m.comm_slowdown);
    if (!json.empty()) std::ofstream(json) << ddpsim::formats::to_json(m, host_name());
  }
  transport.barrier();
  return 0;
}

// `train`'s command line: the trainer's options and what main does with them.
// --network RATE, for train, allreduce-sweep and overlap on the CPU.
void add_network_option(CLI::App& cmd, std::string& rate) {
  cmd.add_option("--network", rate,
                 "RATE (1gbit, 400mbit, ...): the job runs inside an emulated network of that rate a rank, made by "
                 "`python3 -m ddpsim_torch network RATE --ranks W -- mpirun ...`; the ranks' MPI traffic goes over TCP "
                 "on the shaped loopback (docs/emulated-network.md)");
}

struct TrainArgs {
  TrainerOptions o;
  std::string widths = "8,64,64,1", params_out, json_prefix, device = "cpu", strategy = "ddp", sharding = "full";
  std::string flight_dir;  ///< --flight-recorder
  std::string network;     ///< --network RATE: inside a launcher's emulated network (network_rank.hpp)
  std::vector<std::string> faults;
  int ranks_per_node = 0;
  bool no_shuffle = false;
  double timeout_s = 600;
};

CLI::App* add_train(CLI::App& app, TrainArgs& a) {
  TrainerOptions& o = a.o;
  CLI::App* train = app.add_subcommand("train", "Train; run one process per rank under mpirun (or srun)");
  train->add_option("--widths", a.widths, "Layer widths: input,hidden...,output (default 8,64,64,1)");
  train->add_option("--dataset-size", o.dataset_size, "Synthetic examples (default 128)")->check(CLI::PositiveNumber);
  train->add_option("--batch-size", o.batch_size, "Per rank (default 8)")->check(CLI::PositiveNumber);
  train->add_option("--epochs", o.epochs, "Default 1")->check(CLI::PositiveNumber);
  train->add_option("--max-steps", o.max_steps, "Stop once this many steps are done, resumed ones included");
  train->add_option("--seed", o.seed, "Default 0");
  train->add_option("--lr", o.lr, "Default 0.01");
  train->add_option("--momentum", o.momentum, "Default 0.9");
  train->add_option("--bucket-cap-mb", o.bucket_cap_mb, "Default 25")->check(CLI::PositiveNumber);
  train->add_option("--first-bucket-mb", o.first_bucket_mb, "Default 1")->check(CLI::PositiveNumber);
  train->add_option("--comm-hook", o.comm_hook,
                    "DDP's communication hook: allreduce (default) or fp16_compress (each bucket all-reduced in half "
                    "precision; --device cpu, --strategy ddp)")
      ->check(CLI::IsMember({"allreduce", "fp16_compress"}));
  train->add_flag("--no-shuffle", a.no_shuffle, "DistributedSampler(shuffle=False)");
  train->add_option("--strategy", a.strategy, "ddp (default) or fsdp (each layer a unit, sharded over the ranks; CPU only)")
      ->check(CLI::IsMember({"ddp", "fsdp"}));
  train->add_option("--sharding", a.sharding,
                    "Under --strategy fsdp: full (FULL_SHARD, default), grad-op (SHARD_GRAD_OP) or hybrid (HYBRID_SHARD: "
                    "sharded within a node, replicated across nodes)")
      ->check(CLI::IsMember({"full", "grad-op", "hybrid"}));
  train->add_option("--ranks-per-node", a.ranks_per_node,
                    "Under --sharding hybrid: a node's ranks, consecutive (default 0: the ranks sharing a host)")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--device", a.device, "cpu (MPI transport) or gpu (NCCL transport; needs a CUDA build)")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  train->add_option("--fault", a.faults, "skip-backward:rank=R,iter=I or kill:rank=R,step=S (repeatable)");
  train->add_flag("--symmetric-skip", o.symmetric_skip, "Ranks agree on skipping backward (one-element all-reduce first)");
  train->add_option("--timeout-s", a.timeout_s, "Watchdog: abort every rank when a collective makes no progress this long "
                                                "(default 600, as NCCL's; 0: off)")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--flight-recorder", a.flight_dir,
                    "When the watchdog fires, each rank writes its flight recorder (PyTorch's dump, its last 2000 "
                    "collectives) to DIR/nccl_trace_rank_<r>, for ddpsim explain DIR (--device cpu)");
  train->add_option("--checkpoint-dir", o.checkpoint_dir, "Rank 0 checkpoints here");
  train->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints (0: never)")->check(CLI::NonNegativeNumber);
  train->add_option("--keep-checkpoints", o.keep_checkpoints, "Newest checkpoints kept (default 3)")->check(CLI::PositiveNumber);
  train->add_flag("--resume", o.resume, "Start from the newest valid checkpoint in --checkpoint-dir");
  train->add_option("--params", a.params_out, "Rank 0 writes the final parameters here (raw fp32)");
  train->add_option("--json", a.json_prefix, "Each rank writes PREFIX.rank<r>.json: timings and example IDs");
  add_network_option(*train, a.network);
  return train;
}

// After parsing: the shape, the faults and the program; std::invalid_argument for a combination refused.
void finish_train(TrainArgs& a, const CLI::App& train) {
  TrainerOptions& o = a.o;
  o.shuffle = !a.no_shuffle;
  for (const std::string& f : a.faults) o.faults.push_back(ddpsim::real::parse_fault(f));
  std::vector<int> w;
  std::stringstream ss(a.widths);
  for (std::string item; std::getline(ss, item, ',');) w.push_back(std::stoi(item));
  if (w.size() < 2) throw std::invalid_argument("--widths needs at least input and output");
  if (std::any_of(w.begin(), w.end(), [](int v) { return v < 1; })) throw std::invalid_argument("--widths must be positive");
  o.shape.input = w.front();
  o.shape.output = w.back();
  o.shape.hidden.assign(w.begin() + 1, w.end() - 1);
  if (a.strategy == "fsdp") {
    o.parallelism = a.sharding == "grad-op"  ? ddpsim::real::Parallelism::kShardGradOp
                    : a.sharding == "hybrid" ? ddpsim::real::Parallelism::kHybridShard
                                             : ddpsim::real::Parallelism::kFullShard;
    if (a.device == "gpu") throw std::invalid_argument("--strategy fsdp runs on --device cpu only (no NCCL all_gather/reduce_scatter path yet)");
    if (std::any_of(o.faults.begin(), o.faults.end(), [](const auto& f) { return f.kind == ddpsim::real::Fault::Kind::kSkipBackward; })) {
      throw std::invalid_argument("--fault skip-backward is DDP's; under --strategy fsdp use kill:rank=R,step=S");
    }
  } else if (train.count("--sharding") > 0) {
    throw std::invalid_argument("--sharding needs --strategy fsdp");
  }
  if (o.comm_hook != "allreduce" && (a.device == "gpu" || a.strategy != "ddp")) {
    throw std::invalid_argument("--comm-hook fp16_compress runs under --strategy ddp on --device cpu (the MPI "
                                "transport's half-precision all-reduce)");
  }
  if (train.count("--ranks-per-node") > 0 && o.parallelism != ddpsim::real::Parallelism::kHybridShard) {
    throw std::invalid_argument("--ranks-per-node needs --sharding hybrid");
  }
  if ((o.resume || o.checkpoint_every > 0) && o.checkpoint_dir.empty()) {
    throw std::invalid_argument("--resume and --checkpoint-every need --checkpoint-dir");
  }
  if (!a.flight_dir.empty() && a.device == "gpu") {
    throw std::invalid_argument("--flight-recorder records the MPI transport's collectives (--device cpu); the NCCL "
                                "transport's watchdog does not write dumps yet");
  }
}

// `train` on `transport`: the program, the loop, then the parameters, logs and summary lines.
void run_train(ddpsim::real::Transport& transport, TrainArgs& a) {
  TrainerOptions& o = a.o;
  const int rank = transport.rank();
  o.log = [](const std::string& m) { fmt::print("{}\n", m); std::fflush(stdout); };
  std::unique_ptr<ddpsim::real::Replica> replica;
  std::unique_ptr<ddpsim::real::Program> program;
  if (o.parallelism == ddpsim::real::Parallelism::kDdp) {
    const auto config = ddpsim::real::replica_config(o, transport.world_size());
    replica = a.device == "gpu" ? ddpsim::real::make_gpu_replica(config) : ddpsim::real::make_cpu_replica(config);
    program = ddpsim::real::make_ddp_program(*replica, o, transport.world_size());
  } else {
    program = ddpsim::real::make_fsdp_program(o, transport.world_size());
  }
  const auto result = ddpsim::real::train(transport, *program, o);
  if (rank == 0 && !a.params_out.empty()) {
    std::ofstream out(a.params_out, std::ios::binary);
    out.write(reinterpret_cast<const char*>(result.parameters.data()),
              static_cast<std::streamsize>(result.parameters.size() * sizeof(float)));
  }
  if (!a.json_prefix.empty()) write_rank_json(a.json_prefix, transport, program->device(), o, a.widths, result);
  transport.barrier();
  if (rank == 0) {
    fmt::print("trained {} steps on {} rank(s) ({}, {})\n", result.steps.size(), transport.world_size(), transport.name(),
               ddpsim::real::parallelism_name(o.parallelism));
  }
  if (result.peak_memory_bytes >= 0) fmt::print("rank {}: peak memory {} bytes\n", rank, result.peak_memory_bytes);
}

// `allreduce-sweep`'s command line.
struct SweepArgs {
  std::int64_t min_bytes = 8, max_bytes = std::int64_t{256} << 20;
  int iters = 5;
  std::string json, op = "all_reduce", network;
};

CLI::App* add_sweep(CLI::App& app, SweepArgs& s, std::string& device) {
  CLI::App* sweep = app.add_subcommand("allreduce-sweep", "Time all-reduces from 8 B to 256 MiB (algbw, busbw); under mpirun");
  sweep->add_option("--op", s.op, "all_reduce (default), all_gather, reduce_scatter or broadcast (nccl-tests' sizes)")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "broadcast"}));
  sweep->add_option("--min-bytes", s.min_bytes, "Default 8")->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 31));
  sweep->add_option("--max-bytes", s.max_bytes, "Default 256 MiB")->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 31));
  sweep->add_option("--iters", s.iters, "Timed repetitions per size (default 5)")->check(CLI::PositiveNumber);
  sweep->add_option("--device", device, "cpu (MPI) or gpu (NCCL)")->check(CLI::IsMember({"cpu", "gpu"}));
  sweep->add_option("--json", s.json, "Rank 0 writes the sweep here");
  add_network_option(*sweep, s.network);
  return sweep;
}

// `overlap`'s command line.
struct OverlapArgs {
  ddpsim::real::OverlapOptions o;
  std::vector<double> mb{0.1, 0.5};
  std::string json;
  std::string network;  ///< --network RATE, as train's
};

CLI::App* add_overlap(CLI::App& app, OverlapArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "overlap", "Compute and an all-reduce alone and at once (MPI on CPUs): the contention pair ddpsim calibrate "
                 "--overlap reads; under mpirun");
  cmd->add_option("--mb", a.mb, "All-reduce sizes in MiB, like the job's buckets (default 0.1 0.5)")
      ->check(CLI::Range(1e-6, 2048.0));
  cmd->add_option("--matrix", a.o.matrix, "A compute chunk: one N x N float product (default 64)")->check(CLI::Range(1, 4096));
  cmd->add_option("--chunks", a.o.chunks, "Chunks timed alone per repetition (default 50)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--reps", a.o.reps, "Repetitions per size; medians (default 7)")->check(CLI::Range(1, 10000));
  cmd->add_option("--json", a.json, "Rank 0 writes the measurement here");
  add_network_option(*cmd, a.network);
  return cmd;
}

int gpu_info() {
  if (!ddpsim::real::gpu_available()) {
    fmt::print("no GPU: this build {} the CUDA/NCCL path, and no CUDA device is visible\n", ddpsim::real::gpu_built() ? "has" : "lacks");
    return 77;
  }
  fmt::print("{}\n", ddpsim::real::gpu_description());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddpsim-real: a real DDP trainer (MPI on CPUs, NCCL on GPUs) that measures itself"};
  app.require_subcommand(1);
  TrainArgs t;
  CLI::App* train = add_train(app, t);
  std::string a, b;
  double rtol = 1e-5;
  CLI::App* cmp = app.add_subcommand("compare", "Compare two --params files");
  cmp->add_option("a", a)->required();
  cmp->add_option("b", b)->required();
  cmp->add_option("--rtol", rtol, "Relative tolerance (default 1e-5; 0: bit-identical)")->check(CLI::NonNegativeNumber);
  std::vector<std::string> audit_prefixes;
  std::int64_t audit_n = 0;
  CLI::App* aud = app.add_subcommand("audit", "Check the example-ID logs of train --json runs (a run and its resumptions)");
  aud->add_option("prefixes", audit_prefixes, "The --json prefixes")->required();
  aud->add_option("--dataset-size", audit_n, "Examples")->required()->check(CLI::PositiveNumber);
  std::vector<std::string> report_prefixes;
  CLI::App* rep = app.add_subcommand("report", "Throughput and scaling efficiency of train --json runs");
  rep->add_option("prefixes", report_prefixes, "The --json prefixes, one run per world size")->required();
  SweepArgs s;
  CLI::App* sweep = add_sweep(app, s, t.device);
  OverlapArgs ov;
  CLI::App* overlap = add_overlap(app, ov);
  CLI::App* info = app.add_subcommand("gpu-info", "Say whether the CUDA/NCCL path is built and a GPU visible (exit 77 if not)");
  try {
    app.parse(argc, argv);
    if (*train) finish_train(t, *train);
    const std::string& network = *train ? t.network : *overlap ? ov.network : s.network;
    if (!network.empty() && (*train || *sweep || *overlap)) {
      if (t.device == "gpu") throw std::invalid_argument("--network emulates a network for the CPU (MPI) transport only");
      ddpsim::real::join_emulated_network(network);  // before MPI_Init, which reads the MCA settings it makes
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: error: {}\n", e.what());
    return 2;
  }
  try {
    if (*cmp) return compare(a, b, rtol);
    if (*aud) return audit(audit_prefixes, audit_n);
    if (*rep) return report(report_prefixes);
    if (*info) return gpu_info();
    const bool hybrid = *train && t.o.parallelism == ddpsim::real::Parallelism::kHybridShard;
    const double timeout_s = *train ? t.timeout_s : 0;
    std::unique_ptr<ddpsim::real::MpiTransport> mpi;
    try {
      mpi = std::make_unique<ddpsim::real::MpiTransport>(&argc, &argv, timeout_s, hybrid ? t.ranks_per_node : -1);
    } catch (const std::invalid_argument& e) {  // node groups that do not fit the ranks launched
      fmt::print(stderr, "ddpsim-real: error: {}\n", e.what());
      return 2;
    }
    std::unique_ptr<ddpsim::real::Transport> nccl;
    if (*train && !t.flight_dir.empty()) mpi->record_flights(t.flight_dir);
    if (t.device == "gpu") nccl = ddpsim::real::make_nccl_transport(*mpi, timeout_s);
    ddpsim::real::Transport& transport = nccl ? *nccl : static_cast<ddpsim::real::Transport&>(*mpi);
    if (*overlap) {
      for (const double mb : ov.mb) ov.o.sizes.push_back(static_cast<std::int64_t>(mb * (1 << 20)));
      return overlap_cmd(transport, ov.o, ov.json);
    }
    if (*sweep) return allreduce_sweep_cmd(transport, t.device, s.op, s.min_bytes, s.max_bytes, s.iters, s.json);
    run_train(transport, t);
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
