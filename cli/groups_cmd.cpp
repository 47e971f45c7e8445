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
#include "models/replica_pricing.hpp"
#include "netsim/simgrid_engine.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"
#include "sim/engine.hpp"
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
  if (o.stagger_us && !(*o.stagger_us >= 0 && *o.stagger_us <= 1e9)) {
    throw InputError(kCommandLine, "--stagger-us", fmt::format("{}", *o.stagger_us), "expected a number of us from 0 to 1e9");
  }
  if (!o.measured.empty() || o.tuning) {
    throw InputError(kCommandLine, "--groups", std::to_string(o.groups), "expected without --measured and --tuning");
  }
  if (!netsim::simgrid_available()) {
    throw InputError(kCommandLine, "--groups", std::to_string(o.groups),
                     "expected an engine that runs groups at once (" + netsim::simgrid_unavailable_reason() + ")");
  }
}

// The slowest group's own time (its collective's start to end) when group i
// starts its `c` i x `stagger` after group 0: the engine's link-sharing
// groups (Engine::add_sharing_groups), each repriced on the platform for the
// set in flight at every start and end (models::ReplicaPricing).
double staggered_us(const models::DdpJob& job, models::CollectiveTimer& timer, const sim::Collective& c,
                    const std::vector<std::vector<int>>& groups, int w, sim::Time stagger) {
  struct Slowest final : sim::Observer {
    double us = 0;
    void on_op(const sim::OpRecord& r) override {
      if (r.is_collective) us = std::max(us, (r.end - r.start).us());
    }
  } slowest;
  sim::Engine engine(w, [](const sim::Collective&, int) { return sim::Time{}; });
  models::ReplicaPricing pricing(job, groups, &timer);
  const std::vector<sim::GroupId> ids = engine.add_sharing_groups(
      groups, sim::StreamKind::kComm,
      [&pricing](const sim::Collective& x, int group, const std::vector<sim::InFlight>& in_flight) {
        return pricing.time(x, group, in_flight);
      });
  engine.add_observer(slowest);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (int r : groups[i]) {
      engine.enqueue(r, sim::StreamKind::kComm, stagger * static_cast<std::int64_t>(i), {0, 0}, std::nullopt);
      engine.enqueue_collective(r, ids[i], c, {1, 0}, std::nullopt);
    }
  }
  engine.run();
  return slowest.us;
}

}  // namespace

int collectives_together(const CollectivesOptions& o) {
  check_outputs({{"--json", o.json}});
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
  const std::optional<sim::Time> stagger = o.stagger_us ? std::optional(sim::Time::from_us(*o.stagger_us)) : std::nullopt;
  fmt::print("# {:>12} {:>12} {:>14} {:>9}{}\n", "size(B)", "alone(us)", "together(us)", "slowdown",
             stagger ? fmt::format(" {:>15}", "staggered(us)") : "");
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
          nlohmann::ordered_json row = {{"bytes", b}, {"alone_us", alone}, {"together_us", together}, {"slowdown", slowdown}};
          std::string staggered;
          if (stagger) {
            const double us = staggered_us(s.job, timer, c, groups, w, *stagger);
            staggered = fmt::format(" {:>15.2f}", us);
            row["staggered_us"] = us;
          }
          fmt::print("  {:>12} {:>12.2f} {:>14.2f} {:>8.2f}x{}\n", b, alone, together, slowdown, staggered);
          json["rows"].push_back(std::move(row));
        }
      },
      groups);
  fmt::print("alone: the slowest group on an idle network; together: the slowest while all {} run\n", o.groups);
  if (stagger) {
    fmt::print("staggered: the slowest group's own time when group i starts i x {} us after group 0, each repriced for "
               "the groups in flight at every start and end\n",
               *o.stagger_us);
    json["stagger_us"] = *o.stagger_us;
  }
  if (!o.json.empty()) write_file(o.json, json.dump(2) + "\n");
  return 0;
}

}  // namespace ddpsim::cli
