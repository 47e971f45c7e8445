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
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "real_backend/mpi_transport.hpp"
#include "real_backend/trainer.hpp"

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

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError("cannot read " + path);
  return nlohmann::json::parse(in);
}

// The partitioning proof from each rank's example-ID log: per epoch, every
// example once (bar the padding DistributedSampler documents), and a new order.
int audit(const std::string& prefix, int world, std::int64_t dataset_size) {
  std::vector<std::vector<std::vector<std::int64_t>>> ids;  // rank, epoch, ids
  for (int r = 0; r < world; ++r) ids.push_back(read_json(fmt::format("{}.rank{}.json", prefix, r)).at("ids_per_epoch"));
  const std::size_t epochs = ids.front().size();
  const std::int64_t padding = (world - dataset_size % world) % world;
  bool ok = true;
  std::vector<std::int64_t> previous;
  for (std::size_t e = 0; e < epochs; ++e) {
    std::vector<int> seen(static_cast<std::size_t>(dataset_size), 0);
    std::vector<std::int64_t> order;
    for (int r = 0; r < world; ++r) {
      for (std::int64_t id : ids[static_cast<std::size_t>(r)].at(e)) {
        if (id < 0 || id >= dataset_size) throw CLI::ValidationError(fmt::format("example ID {} out of range", id));
        ++seen[static_cast<std::size_t>(id)];
        order.push_back(id);
      }
    }
    std::int64_t duplicates = 0, omissions = 0;
    for (int c : seen) {
      duplicates += c > 1 ? c - 1 : 0;
      omissions += c == 0;
    }
    const bool same_order = e > 0 && order == previous;
    const bool epoch_ok = duplicates <= padding && omissions == 0 && !same_order;
    fmt::print("epoch {}: {} examples seen, {} duplicate(s) (padding allows {}), {} omission(s), {}: {}\n", e,
               order.size(), duplicates, padding, omissions,
               e == 0 ? "first epoch" : same_order ? "same order as the previous epoch" : "new order",
               epoch_ok ? "ok" : "FAILED");
    ok = ok && epoch_ok;
    previous = std::move(order);
  }
  return ok ? 0 : 1;
}

// Throughput and scaling efficiency from train --json runs at several world
// sizes: median step time after two warm-up steps, rank 0's log.
int report(const std::vector<std::string>& prefixes) {
  struct Row {
    int world;
    double step_ms, samples_per_s;
  };
  std::vector<Row> rows;
  for (const std::string& prefix : prefixes) {
    const auto j = read_json(prefix + ".rank0.json");
    std::vector<double> steps;
    for (const auto& s : j.at("steps")) steps.push_back(s.at("step_ms").get<double>());
    if (steps.size() < 3) throw CLI::ValidationError(prefix + ": fewer than 3 steps logged");
    steps.erase(steps.begin(), steps.begin() + 2);
    std::sort(steps.begin(), steps.end());
    const double median = steps[steps.size() / 2];
    const int world = j.at("world_size").get<int>();
    rows.push_back({world, median, world * j.at("batch_size").get<double>() / (median / 1000)});
  }
  const auto one = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.world == 1; });
  fmt::print("{:<9}{:<10}{:<14}{:<9}{}\n", "workers", "step_ms", "samples/s", "speedup", "efficiency");
  for (const Row& r : rows) {
    const std::string speedup = one != rows.end() ? fmt::format("{:.2f}x", r.samples_per_s / one->samples_per_s) : "-";
    const std::string eff =
        one != rows.end() ? fmt::format("{:.1f}%", 100 * r.samples_per_s / (r.world * one->samples_per_s)) : "-";
    fmt::print("{:<9}{:<10.3f}{:<14.0f}{:<9}{}\n", r.world, r.step_ms, r.samples_per_s, speedup, eff);
  }
  return 0;
}

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
  fmt::print("{} parameters, largest relative difference {:.3g} (parameter {}), tolerance {:.3g}: {}\n", x.size(), worst,
             at, rtol, worst <= rtol ? "equal" : "DIFFERENT");
  return worst <= rtol ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddpsim-real: a real DDP trainer (MPI on CPUs) that measures itself"};
  app.require_subcommand(1);
  TrainerOptions o;
  std::string widths = "8,64,64,1", params_out, json_prefix;
  bool no_shuffle = false;
  CLI::App* train = app.add_subcommand("train", "Train; run one process per rank under mpirun");
  train->add_option("--widths", widths, "Layer widths: input,hidden...,output (default 8,64,64,1)");
  train->add_option("--dataset-size", o.dataset_size, "Synthetic examples (default 128)")->check(CLI::PositiveNumber);
  train->add_option("--batch-size", o.batch_size, "Per rank (default 8)")->check(CLI::PositiveNumber);
  train->add_option("--epochs", o.epochs, "Default 1")->check(CLI::PositiveNumber);
  train->add_option("--max-steps", o.max_steps, "Stop after this many steps");
  train->add_option("--seed", o.seed, "Default 0");
  train->add_option("--lr", o.lr, "Default 0.01");
  train->add_option("--momentum", o.momentum, "Default 0.9");
  train->add_option("--bucket-cap-mb", o.bucket_cap_mb, "Default 25")->check(CLI::PositiveNumber);
  train->add_option("--first-bucket-mb", o.first_bucket_mb, "Default 1")->check(CLI::PositiveNumber);
  train->add_flag("--no-shuffle", no_shuffle, "DistributedSampler(shuffle=False)");
  train->add_option("--params", params_out, "Rank 0 writes the final parameters here (raw fp32)");
  train->add_option("--json", json_prefix, "Each rank writes PREFIX.rank<r>.json: timings and example IDs");
  std::string a, b;
  double rtol = 1e-5;
  CLI::App* cmp = app.add_subcommand("compare", "Compare two --params files");
  cmp->add_option("a", a)->required();
  cmp->add_option("b", b)->required();
  cmp->add_option("--rtol", rtol, "Relative tolerance (default 1e-5)");
  std::string audit_prefix;
  int audit_world = 1;
  std::int64_t audit_n = 0;
  CLI::App* aud = app.add_subcommand("audit", "Check the example-ID logs of a train --json run");
  aud->add_option("prefix", audit_prefix, "The --json prefix of the run")->required();
  aud->add_option("--world-size", audit_world, "Ranks of the run")->required()->check(CLI::PositiveNumber);
  aud->add_option("--dataset-size", audit_n, "Examples")->required()->check(CLI::PositiveNumber);
  std::vector<std::string> report_prefixes;
  CLI::App* rep = app.add_subcommand("report", "Throughput and scaling efficiency of train --json runs");
  rep->add_option("prefixes", report_prefixes, "The --json prefixes, one run per world size")->required();
  std::int64_t min_bytes = 8, max_bytes = std::int64_t{256} << 20;
  int sweep_iters = 5;
  std::string sweep_json;
  CLI::App* sweep = app.add_subcommand("allreduce-sweep", "Time all-reduces from 8 B to 256 MiB (algbw, busbw); under mpirun");
  sweep->add_option("--min-bytes", min_bytes, "Default 8")->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 34));
  sweep->add_option("--max-bytes", max_bytes, "Default 256 MiB")->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 34));
  sweep->add_option("--iters", sweep_iters, "Timed repetitions per size (default 5)")->check(CLI::PositiveNumber);
  sweep->add_option("--json", sweep_json, "Rank 0 writes the sweep here");
  try {
    app.parse(argc, argv);
    o.shuffle = !no_shuffle;
    std::vector<int> w;
    std::stringstream ss(widths);
    for (std::string item; std::getline(ss, item, ',');) w.push_back(std::stoi(item));
    if (w.size() < 2) throw CLI::ValidationError("--widths needs at least input and output");
    o.shape.input = w.front();
    o.shape.output = w.back();
    o.shape.hidden.assign(w.begin() + 1, w.end() - 1);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: error: bad --widths '{}': {}\n", widths, e.what());
    return 2;
  }
  try {
    if (*cmp) return compare(a, b, rtol);
    if (*aud) return audit(audit_prefix, audit_world, audit_n);
    if (*rep) return report(report_prefixes);
    ddpsim::real::MpiTransport transport(&argc, &argv);
    if (*sweep) {
      const auto rows = ddpsim::real::allreduce_sweep(transport, min_bytes, max_bytes, sweep_iters);
      if (transport.rank() == 0) {
        fmt::print("{:>12}  {:>12}  {:>12}  {:>12}   (W = {}, nccl-tests' definitions)\n", "bytes", "time_us",
                   "algbw_GBps", "busbw_GBps", transport.world_size());
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& r : rows) {
          fmt::print("{:>12}  {:>12.2f}  {:>12.4f}  {:>12.4f}\n", r.bytes, r.time_us, r.algbw_GBps, r.busbw_GBps);
          j.push_back({{"bytes", r.bytes}, {"time_us", r.time_us}, {"algbw_GBps", r.algbw_GBps}, {"busbw_GBps", r.busbw_GBps}});
        }
        if (!sweep_json.empty()) {
          std::ofstream(sweep_json) << nlohmann::ordered_json{{"transport", "mpi"}, {"world_size", transport.world_size()}, {"sweep", j}}.dump(2) << "\n";
        }
      }
      transport.barrier();
      return 0;
    }
    const auto result = ddpsim::real::train(transport, o);
    const int rank = transport.rank();
    if (rank == 0 && !params_out.empty()) {
      std::ofstream out(params_out, std::ios::binary);
      out.write(reinterpret_cast<const char*>(result.parameters.data()),
                static_cast<std::streamsize>(result.parameters.size() * sizeof(float)));
    }
    if (!json_prefix.empty()) {
      nlohmann::ordered_json j;
      j["rank"] = rank;
      j["world_size"] = transport.world_size();
      j["transport"] = "mpi";
      j["batch_size"] = o.batch_size;
      j["bucket_bytes"] = result.bucket_bytes;
      j["ids_per_epoch"] = result.ids_per_epoch;
      nlohmann::ordered_json steps = nlohmann::ordered_json::array();
      for (const auto& s : result.steps) {
        steps.push_back({{"iteration", s.iteration}, {"data_ms", s.data_ms}, {"compute_ms", s.compute_ms},
                         {"exposed_comm_ms", s.exposed_comm_ms}, {"step_ms", s.step_ms}});
      }
      j["steps"] = std::move(steps);
      std::ofstream(fmt::format("{}.rank{}.json", json_prefix, rank)) << j.dump(2) << "\n";
    }
    transport.barrier();
    if (rank == 0) fmt::print("trained {} steps on {} rank(s)\n", result.steps.size(), transport.world_size());
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
