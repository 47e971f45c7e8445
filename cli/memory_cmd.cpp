// ddpsim memory (cli/subcommands.hpp): memory per rank at each of a
// scenario's world sizes, part by part, the peak and where it falls.

#include <fmt/format.h>

#include <memory>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_io.hpp"
#include "cli/exit_codes.hpp"
#include "cli/subcommands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "scenarios/input_error.hpp"
#include "scenarios/memory_plan.hpp"
#include "scenarios/scenario.hpp"

namespace ddpsim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

std::string where(const models::MemoryPoint& at) { return at.unit.empty() ? at.phase : at.phase + " " + at.unit; }

}  // namespace

int memory(const MemoryOptions& o) {
  check_outputs({{"--json", o.json}});
  const scenarios::Scenario s = scenarios::load_scenario(o.scenario);
  std::vector<int> worlds = s.sweep.world_sizes;
  if (o.world_size > 0) {
    scenarios::check_fits_cluster(s, o.world_size, "--world-size");
    worlds = {o.world_size};
  }
  const std::string device =
      s.memory.device_bytes ? fmt::format("device {:.2f} GiB", gib(*s.memory.device_bytes)) : "no device.memory_GB";
  fmt::print("# {}: {}; {}\n", s.name, scenarios::describe_program(s), device);
  fmt::print("{:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:<5} {}\n", "workers", "params", "grads",
             "optimizer", "buckets", "unsharded", "activ.", "peak", "fits", "peak_at");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int w : worlds) {
    const models::MemoryEstimate m = scenarios::predict_memory(s, w);
    const std::string fits = s.memory.device_bytes ? (m.peak() <= *s.memory.device_bytes ? "yes" : "NO") : "-";
    fmt::print("{:<8} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}  {:<5} {}\n", w,
               gib(m.parameters), gib(m.gradients), gib(m.optimizer_states), gib(m.buckets + m.comm_hook), gib(m.unsharded),
               gib(m.activations), gib(m.peak()), fits, where(m.peak_at));
    nlohmann::ordered_json row{{"world_size", w}};
    row.update(scenarios::memory_json(m, s));
    rows.push_back(std::move(row));
  }
  fmt::print("\nGiB per rank (2^30 bytes). params, grads, optimizer, buckets: held all step (FSDP: the local "
             "shards); unsharded, activ.: also live at the peak (docs/fsdp.md#memory)\n");
  if (const std::int64_t hook = worlds.empty() ? 0 : scenarios::predict_memory(s, worlds.front()).comm_hook; hook > 0) {
    fmt::print("buckets includes the comm hook's state, {:.3f} GiB held all step ({}: error feedback, warm-started "
               "P and Q)\n", gib(hook), models::to_string(s.job.ddp.comm_hook.kind));
  }
  if (!o.json.empty()) {
    write_file(o.json, nlohmann::ordered_json{{"scenario", s.name}, {"program", scenarios::describe_program(s)}, {"rows", rows}}.dump(2) +
                           "\n");
  }
  const bool all_fit = !s.memory.device_bytes || std::all_of(rows.begin(), rows.end(), [](const auto& r) {
    return r["fits"].template get<bool>();
  });
  return all_fit ? kExitOk : kExitDoesNotFit;
}

Verb add_memory(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  CLI::App* cmd = app.add_subcommand(
      "memory", "Print memory per rank at each world size: model states, unsharded units, activations, the peak");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--world-size", o->world_size, "One world size instead of the scenario's")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--json", o->json, "Write the rows as JSON to this file");
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return memory(*o);
          }};
}

}  // namespace ddpsim::cli
