// ddpsim collectives --groups G (cli/subcommands.hpp): process groups whose
// collectives run at the same time, contending for the links they share,
// on the SimGrid engine.

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_io.hpp"
#include "cli/subcommands.hpp"
#include "models/cluster.hpp"
#include "models/ddp_job.hpp"
#include "netsim/simgrid_engine.hpp"
#include "scenarios/input_error.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "validate/nccl_tests.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

const scenarios::Location kCommandLine{"the command line", 0, 0};

// G groups of W / G ranks: strided, group i = {i, i + G, ...} (one rank a node
// when G is the GPUs of a node: hybrid sharding's replicas), or blocked, group
// i = the i-th run of W / G consecutive ranks (its shards inside a node).
std::vector<std::vector<int>> make_groups(int w, int g, const std::string& layout) {
  if (layout != "strided" && layout != "blocked") {
    throw InputError(kCommandLine, "--layout", layout, "expected strided or blocked");
  }
  if (w % g != 0 || w / g < 2) {
    throw InputError(kCommandLine, "--groups", std::to_string(g),
                     fmt::format("expected a divisor of the world size {} that leaves at least 2 ranks a group", w));
  }
  std::vector<std::vector<int>> out(static_cast<std::size_t>(g));
  for (int r = 0; r < w; ++r) out[static_cast<std::size_t>(layout == "strided" ? r % g : r / (w / g))].push_back(r);
  return out;
}

void check_inputs(const scenarios::Scenario& s, const CollectivesOptions& o, std::optional<sim::CollectiveKind> kind) {
  if (!kind || (*kind != sim::CollectiveKind::kAllReduce && *kind != sim::CollectiveKind::kAllGather &&
                *kind != sim::CollectiveKind::kReduceScatter)) {
    throw InputError(kCommandLine, "--op", o.op, "expected all_reduce, all_gather or reduce_scatter with --groups (ring steps)");
  }
  if (s.job.collective_model != models::CollectiveModel::kRing) {
    throw InputError({s.source, 0, 0}, "collective.model", "nccl",
                     "expected ring with --groups: the SimGrid engine runs the ring's transfers");
  }
  if (!o.measured.empty() || o.tuning) {
    throw InputError(kCommandLine, "--groups", std::to_string(o.groups), "expected without --measured and --tuning");
  }
  if (!netsim::simgrid_available()) {
    throw InputError(kCommandLine, "--groups", std::to_string(o.groups),
                     "expected an engine that runs groups at once (" + netsim::simgrid_unavailable_reason() + ")");
  }
}

}  // namespace

int collectives_together(const CollectivesOptions& o) {
  const scenarios::Scenario s = scenarios::load_scenario(o.scenario);
  const std::optional<sim::CollectiveKind> kind = validate::parse_collective_kind(o.op);
  check_inputs(s, o, kind);
  const int largest = *std::max_element(s.sweep.world_sizes.begin(), s.sweep.world_sizes.end());
  const int w = o.world_size > 0 ? o.world_size : largest;
  const models::ClusterSpec cluster = s.job.cluster ? *s.job.cluster : models::single_switch(w, s.job.network);
  if (w > std::min(cluster.gpus(), scenarios::kMaxSimgridRanks)) {
    throw InputError(kCommandLine, "--world-size", std::to_string(w),
                     fmt::format("expected at most {} ranks: the scenario's cluster, and the SimGrid engine's {}",
                                 cluster.gpus(), scenarios::kMaxSimgridRanks));
  }
  const std::vector<std::vector<int>> groups = make_groups(w, o.groups, o.layout);
  const std::vector<std::int64_t> sizes = validate::parse_size_range(o.sizes, "--sizes");
  fmt::print("# {}: {} over {} process groups at once ({}: {}), {} ranks each, SimGrid engine\n", s.name, o.op, o.groups,
             o.layout, fmt::format("{{{}}}", fmt::join(groups.front(), ", ")) + (groups.size() > 1 ? ", ..." : ""),
             w / o.groups);
  fmt::print("# {:>12} {:>12} {:>14} {:>9}\n", "size(B)", "alone(us)", "together(us)", "slowdown");
  nlohmann::ordered_json json = {{"scenario", s.name}, {"op", o.op},       {"world_size", w},
                                 {"groups", groups}, {"engine", "simgrid"}, {"rows", nlohmann::ordered_json::array()}};
  netsim::run_with_simgrid(
      cluster, s.job.network.launch_overhead, models::Algorithm::kRing, {w}, s.simgrid,
      [&](models::CollectiveTimer& timer) {
        for (std::int64_t b : sizes) {
          const sim::Collective c{*kind, b};
          double alone = 0, together = 0;
          for (const auto& g : groups) alone = std::max(alone, timer.time_together(c, {g}).front().us());
          for (const sim::Time t : timer.time_together(c, groups)) together = std::max(together, t.us());
          const double slowdown = alone > 0 ? together / alone : 1;
          fmt::print("  {:>12} {:>12.2f} {:>14.2f} {:>8.2f}x\n", b, alone, together, slowdown);
          json["rows"].push_back({{"bytes", b}, {"alone_us", alone}, {"together_us", together}, {"slowdown", slowdown}});
        }
      },
      groups);
  fmt::print("alone: the slowest group on an idle network; together: the slowest while all {} run\n", o.groups);
  if (!o.json.empty()) write_file(o.json, json.dump(2) + "\n");
  return 0;
}

}  // namespace ddpsim::cli
