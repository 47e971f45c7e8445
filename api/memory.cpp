// ddpsim::memory (include/ddpsim/ddpsim.hpp): memory per rank at each of a
// scenario's world sizes, part by part, the peak and where it falls; the
// text and JSON of ddpsim memory, which prints them.

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/api_data.hpp"
#include "loader/memory_plan.hpp"

namespace ddpsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

std::string where(const models::MemoryPoint& at) { return at.unit.empty() ? at.phase : at.phase + " " + at.unit; }

MemoryRow row_of(int w, const models::MemoryEstimate& m, const scenarios::Scenario& s) {
  MemoryRow row;
  row.world_size = w;
  row.parameters = m.parameters;
  row.gradients = m.gradients;
  row.optimizer_states = m.optimizer_states;
  row.buckets = m.buckets + m.comm_hook;
  row.unsharded = m.unsharded;
  row.activations = m.activations;
  row.peak = m.peak();
  row.peak_at = where(m.peak_at);
  if (s.memory.device_bytes) row.fits = m.peak() <= *s.memory.device_bytes;
  return row;
}

MemoryReport report(const scenarios::Scenario& s, const std::vector<int>& worlds) {
  MemoryReport r;
  r.scenario = s.name;
  r.program = scenarios::describe_program(s);
  r.device_bytes = s.memory.device_bytes;
  const std::string device =
      s.memory.device_bytes ? fmt::format("device {:.2f} GiB", gib(*s.memory.device_bytes)) : "no device.memory_GB";
  r.text = fmt::format("# {}: {}; {}\n", s.name, r.program, device);
  r.text += fmt::format("{:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {:<5} {}\n", "workers", "params",
                        "grads", "optimizer", "buckets", "unsharded", "activ.", "peak", "fits", "peak_at");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const int w : worlds) {
    const models::MemoryEstimate m = scenarios::predict_memory(s, w);
    const MemoryRow row = row_of(w, m, s);
    const std::string fits = row.fits ? (*row.fits ? "yes" : "NO") : "-";
    r.text += fmt::format("{:<8} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}  {:<5} {}\n", w,
                          gib(row.parameters), gib(row.gradients), gib(row.optimizer_states), gib(row.buckets),
                          gib(row.unsharded), gib(row.activations), gib(row.peak), fits, row.peak_at);
    r.rows.push_back(row);
    nlohmann::ordered_json j{{"world_size", w}};
    j.update(scenarios::memory_json(m, s));
    rows.push_back(std::move(j));
  }
  r.text += "\nGiB per rank (2^30 bytes). params, grads, optimizer, buckets: held all step (FSDP: the local "
            "shards); unsharded, activ.: also live at the peak (docs/fsdp.md#memory)\n";
  if (const std::int64_t hook = worlds.empty() ? 0 : scenarios::predict_memory(s, worlds.front()).comm_hook; hook > 0) {
    r.text += fmt::format("buckets includes the comm hook's state, {:.3f} GiB held all step ({}: error feedback, "
                          "warm-started P and Q)\n",
                          gib(hook), models::to_string(s.job.ddp.comm_hook.kind));
  }
  r.json = nlohmann::ordered_json{{"scenario", s.name}, {"program", r.program}, {"rows", rows}}.dump(2) + "\n";
  return r;
}

}  // namespace

bool MemoryReport::all_fit() const {
  return std::all_of(rows.begin(), rows.end(), [](const MemoryRow& r) { return r.fits.value_or(true); });
}

MemoryReport memory(const Scenario& scenario, std::optional<int> world_size) {
  return api::guarded([&] {
    const scenarios::Scenario& s = scenario.data().scenario;
    std::vector<int> worlds = s.sweep.world_sizes;
    if (world_size) {
      scenarios::check_fits_cluster(s, *world_size, "--world-size");
      worlds = {*world_size};
    }
    return report(s, worlds);
  });
}

}  // namespace ddpsim
