// ddpsim advise (cli/subcommands.hpp): the configurations a scenario leaves
// open, ranked by an objective, with the reasons for the first
// (advise/advisor.hpp, docs/advise.md).

#include <fmt/format.h>

#include <memory>

#include <charconv>
#include <iostream>

#include "advise/advise_html.hpp"
#include "advise/advise_report.hpp"
#include "advise/advisor.hpp"
#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/exit_codes.hpp"
#include "cli/subcommands.hpp"
#include "cli/verb.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

std::int64_t batch_bound(const std::string& range, std::string_view part) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (ec != std::errc() || end != part.data() + part.size() || v < 1) {
    throw InputError({"the command line", 0, 0}, "--global-batch", range,
                     "expected MIN:MAX, two positive integers with MIN <= MAX (e.g. 256:1024)");
  }
  return v;
}

}  // namespace

int advise(const AdviseCliOptions& o, const MpiSession& mpi) {
  check_outputs({{"--json", o.json}, {"--plot", o.plot}, {"--html", o.html}});
  {
    // Each configuration is a run of about the scenario's size: refused past ddpsim run's budget.
    scenarios::Scenario s = scenarios::load_scenario(o.scenario);
    if (!o.world_sizes.empty()) s.sweep.world_sizes = o.world_sizes;
    scenarios::check_budget(s, scenarios::estimate_work(s), o.budget);
  }
  advisor::AdviseOptions options;
  const auto objective = advisor::parse_objective(o.objective);
  if (!objective) {
    throw InputError({"the command line", 0, 0}, "--objective", o.objective,
                     "expected one of step, throughput, gpu_hours, goodput");
  }
  options.objective = *objective;
  options.world_sizes = o.world_sizes;
  options.threads = o.threads;
  options.programs = o.programs;
  if (!o.global_batch.empty()) {
    const auto colon = o.global_batch.find(':');
    const std::string_view text(o.global_batch);
    if (colon == std::string::npos) batch_bound(o.global_batch, "");
    options.global_batch_min = batch_bound(o.global_batch, text.substr(0, colon));
    options.global_batch_max = batch_bound(o.global_batch, text.substr(colon + 1));
    if (*options.global_batch_min > *options.global_batch_max) batch_bound(o.global_batch, "");
  }
  options.partition = {mpi.rank(), mpi.size(), [&mpi](const std::string& mine) { return mpi.gather(mine); }};
  const advisor::Advice a = advisor::advise(o.scenario, options);
  if (!a.complete) return 0;  // another process prints
  advisor::write_text(std::cout, a, o.top);
  if (!o.json.empty()) write_file(o.json, advisor::to_json(a).dump(2) + "\n");
  if (!o.plot.empty()) write_file(o.plot, advisor::to_svg(a));
  if (!o.html.empty()) write_file(o.html, advisor::to_html(a, report::load_chart_assets()));
  return a.ranked.empty() ? kExitDoesNotFit : kExitOk;
}

Verb add_advise(CLI::App& app) {
  auto o = std::make_shared<AdviseCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "advise", "Search the configurations a scenario leaves open and recommend one (docs/advise.md)");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--objective", o->objective, "step, throughput (the default), gpu_hours or goodput");
  cmd->add_option("--world-size", o->world_sizes, "World sizes to try, comma-separated (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--global-batch", o->global_batch,
                  "MIN:MAX: try gradient accumulations (powers of two) that keep the global batch in this range");
  cmd->add_option("--programs", o->programs,
                  "Programs to try, comma-separated: DDP, FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, "
                  "_HYBRID_SHARD_ZERO2 (default: every one that applies)")
      ->delimiter(',');
  cmd->add_option("--json", o->json, "Write every configuration and the recommendation as JSON to this file");
  cmd->add_option("--plot", o->plot, "Write step time against peak memory per GPU as an SVG to this file");
  cmd->add_option("--html", o->html,
                  "Write the ranking and every configuration's objective against memory "
                  "as one self-contained HTML page");
  cmd->add_option("--top", o->top, "Configurations printed (default 20; --json has all)")
      ->check(CLI::Range(1, 1 << 20));
  add_budget(cmd, o->budget);
  cmd->add_option("--threads", o->threads, "Simulations at once (default 1); the advice is the same at any count")
      ->check(CLI::Range(1, 1024));
  return {cmd, [o](const MpiSession& mpi) { return advise(*o, mpi); }, true};
}

}  // namespace ddpsim::cli
