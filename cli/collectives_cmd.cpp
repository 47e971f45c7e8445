// ddpsim collectives (cli/subcommands.hpp): what the scenario's collective
// model predicts, in all_reduce_perf's columns, beside a measured table.

#include <fmt/format.h>

#include <memory>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_io.hpp"
#include "cli/subcommands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "models/ddp_job.hpp"
#include "models/nccl_model.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"
#include "validate/median.hpp"
#include "validate/nccl_tests.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

using validate::median;

int world_size_of(const CollectivesOptions& o, const scenarios::Scenario& s, const validate::NcclTestsTable* measured) {
  const int largest = *std::max_element(s.sweep.world_sizes.begin(), s.sweep.world_sizes.end());
  const int w = o.world_size > 0 ? o.world_size : measured != nullptr && measured->ranks > 0 ? measured->ranks : largest;
  scenarios::check_fits_cluster(s, w, "--world-size");
  if (measured != nullptr && measured->ranks > 0 && measured->ranks != w) {
    throw InputError({measured->file, 0, 0}, "# Rank", std::to_string(measured->ranks),
                     fmt::format("expected {} ranks, the world size compared (--world-size)", w));
  }
  return w;
}

// NCCL's table for `kind` over `w` ranks, as NCCL_DEBUG_SUBSYS=TUNING logs it: per algorithm and
// protocol the latency (us) and bandwidth (GB/s) before any per-call correction; "-" where disabled.
nlohmann::ordered_json print_tuning(const scenarios::Scenario& s, sim::CollectiveKind kind, const std::string& op, int w) {
  if (s.job.collective_model != models::CollectiveModel::kNccl || !s.job.cluster) {
    throw InputError({"the command line", 0, 0}, "--tuning", s.name,
                     "expected a scenario with collective.model: nccl (the ring model has no tuning table)");
  }
  const models::NcclTopology topo = models::nccl_topology(*s.job.cluster);
  fmt::print("# NCCL's tuning table for {} over {} ranks (latency us / bandwidth GB/s, NCCL_DEBUG_SUBSYS=TUNING's "
             "numbers; - disabled)\n#   {:<14} {:>16} {:>16} {:>16}\n", op, w, "algorithm", "LL", "LL128", "Simple");
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  // nccl_costs lists every algorithm with its three protocols in order (LL, LL128, Simple): a row each.
  const auto costs = models::nccl_costs(topo, kind, 1 << 20, w);
  for (std::size_t i = 0; i < costs.size(); i += 3) {
    fmt::print("    {:<14}", models::to_string(costs[i].algo));
    for (std::size_t p = i; p < i + 3 && p < costs.size(); ++p) {
      const models::NcclCost& c = costs[p];
      const bool on = c.time_us >= 0;
      fmt::print(" {:>16}", on ? fmt::format("{:.1f}/{:.1f}", c.latency_us, c.bandwidth_GBps) : "-");
      if (on) {
        table.push_back({{"algorithm", models::to_string(c.algo)}, {"protocol", models::to_string(c.proto)},
                         {"latency_us", c.latency_us}, {"bandwidth_GBps", c.bandwidth_GBps}});
      }
    }
    fmt::print("\n");
  }
  return table;
}

}  // namespace

int collectives(const CollectivesOptions& o) {
  check_outputs({{"--json", o.json}});
  if (o.stagger_us) {
    throw InputError({"the command line", 0, 0}, "--stagger-us", fmt::format("{}", *o.stagger_us),
                     "expected with --groups: it staggers process groups' starts");
  }
  const scenarios::Scenario scenario = scenarios::load_scenario(o.scenario);
  const std::optional<sim::CollectiveKind> kind = validate::parse_collective_kind(o.op);
  if (!kind) {
    throw InputError({"the command line", 0, 0}, "--op", o.op,
                     "expected all_reduce, all_gather, reduce_scatter, broadcast, reduce or all_to_all");
  }
  if (*kind == sim::CollectiveKind::kAllToAll && scenario.job.collective_model == models::CollectiveModel::kNccl) {
    throw InputError({"the command line", 0, 0}, "--op", o.op,
                     "expected a collective of NCCL's tuning model: NCCL runs all_to_all as grouped send/recv, "
                     "outside it (the ring model prices it as W-1 pairwise steps)");
  }
  std::optional<validate::NcclTestsTable> measured;
  if (!o.measured.empty()) measured = validate::read_nccl_tests(o.measured);
  const int w = world_size_of(o, scenario, measured ? &*measured : nullptr);
  std::vector<std::int64_t> sizes;
  std::map<std::int64_t, double> measured_us;
  if (measured) {
    for (const auto& r : measured->rows) {
      sizes.push_back(r.bytes);
      measured_us[r.bytes] = r.time_us;
    }
  } else {
    sizes = validate::parse_size_range(o.sizes, "--sizes");
  }
  std::optional<nlohmann::ordered_json> tuning;
  if (o.tuning) tuning = print_tuning(scenario, *kind, o.op, w);
  const auto rows = validate::predict_collectives(scenario, *kind, sizes, w);
  const bool nccl = scenario.job.collective_model == models::CollectiveModel::kNccl;
  fmt::print("# {}: {} over {} ranks, {}\n", scenario.name, o.op, w,
             nccl ? "NCCL's tuning model (v2.30.7) plus the floor" : "the alpha-beta ring model");
  fmt::print("# {:>12} {:>12} {:>10} {:>10} {:>14} {:>8}", "size(B)", "time(us)", "algbw", "busbw", "algorithm", "proto");
  if (measured) fmt::print(" {:>12} {:>8}", "measured", "error");
  fmt::print("\n");
  nlohmann::ordered_json json = {{"scenario", scenario.name}, {"op", o.op}, {"world_size", w},
                                 {"model", nccl ? "nccl" : "ring"}, {"rows", nlohmann::ordered_json::array()}};
  std::vector<double> errors;
  for (const auto& r : rows) {
    const double alg = validate::algbw_GBps(r.bytes, r.time_us), bus = validate::busbw_GBps(*kind, r.bytes, r.time_us, w);
    fmt::print("  {:>12} {:>12.2f} {:>10.2f} {:>10.2f} {:>14} {:>8}", r.bytes, r.time_us, alg, bus, r.algorithm, r.protocol);
    nlohmann::ordered_json row = {{"bytes", r.bytes}, {"time_us", r.time_us}, {"algbw_GBps", alg}, {"busbw_GBps", bus},
                                  {"algorithm", r.algorithm}, {"protocol", r.protocol}};
    if (measured) {
      const double m = measured_us.at(r.bytes), err = m > 0 ? 100 * (r.time_us - m) / m : 0;
      fmt::print(" {:>12.2f} {:>+7.1f}%", m, err);
      errors.push_back(std::fabs(err));
      row["measured_us"] = m;
      row["error_pct"] = err;
    }
    fmt::print("\n");
    json["rows"].push_back(std::move(row));
  }
  if (measured) {
    fmt::print("median |error| over {} sizes: {:.1f} %\n", errors.size(), median(errors));
    json["median_abs_error_pct"] = median(errors);
  }
  if (tuning) json["tuning"] = std::move(*tuning);
  if (!o.json.empty()) write_file(o.json, json.dump(2) + "\n");
  return 0;
}

Verb add_collectives(CLI::App& app) {
  auto o = std::make_shared<CollectivesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collectives",
      "Print the collective times a scenario predicts, in nccl-tests' columns (and beside a measured table)");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--op", o->op, "all_reduce (default), all_gather, reduce_scatter, broadcast, reduce or all_to_all");
  cmd->add_option("--sizes", o->sizes, "MIN:MAX bytes, every power of two between (default 8:16G; K, M, G = 1,024^n)");
  cmd->add_option("--world-size", o->world_size, "Ranks (default: the measured table's, else the scenario's largest)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--measured", o->measured,
                  "nccl-tests output to compare with, size by size (its sizes replace --sizes)");
  cmd->add_option("--json", o->json, "Write the table as JSON to this file");
  cmd->add_option("--groups", o->groups,
                  "G process groups run the collective at once, each a ring, on the SimGrid engine: "
                  "each size alone and together (ring model; all_reduce, all_gather, reduce_scatter)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--layout", o->layout,
                  "--groups' ranks: strided (group i = i, i+G, ...: replicas across nodes, the default) or "
                  "blocked (group i = the i-th W/G consecutive ranks: shards inside a node)");
  cmd->add_option("--stagger-us", o->stagger_us,
                  "With --groups: also run them staggered, group i starting i x this many us after group 0, "
                  "each collective repriced for the groups in flight at every start and end");
  cmd->add_flag("--tuning", o->tuning,
                "Also print NCCL's latency and bandwidth per algorithm and protocol (collective.model: nccl), "
                "as NCCL_DEBUG_SUBSYS=TUNING logs them");
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return o->groups > 0 ? collectives_together(*o) : collectives(*o);
          }};
}

}  // namespace ddpsim::cli
