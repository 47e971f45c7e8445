#include "advise/advise_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "advise/reasons.hpp"
#include "present/plot.hpp"

namespace ddpsim::advisor {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr int kDroppedShown = 5;

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kGiB; }
double round6(double v) { return std::round(v * 1e6) / 1e6; }

std::string unit_of(Objective o) {
  switch (o) {
    case Objective::kStep: return "ms a step, lower is better";
    case Objective::kThroughput: return "samples/s, higher is better";
    case Objective::kGpuHours: return "GPU-hours a million samples, lower is better";
    case Objective::kGoodput: return "samples/s times the goodput failures leave, higher is better";
  }
  return {};
}

nlohmann::ordered_json config_json(const Evaluated& e) {
  const Configuration& c = e.config;
  nlohmann::ordered_json j{{"configuration", c.describe()},
                           {"program", c.program},
                           {"bucket_cap_mb", c.fsdp() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.bucket_cap_mb)},
                           {"comm_hook", c.fsdp() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.comm_hook)},
                           {"gradient_accumulation", c.accumulation},
                           {"world_size", c.world_size},
                           {"activation_checkpointing", c.checkpointing},
                           {"global_batch", e.global_batch},
                           {"step_ms", e.step_ms ? nlohmann::ordered_json(round6(*e.step_ms)) : nlohmann::ordered_json(nullptr)},
                           {"samples_per_s", round6(e.samples_per_s)},
                           {"peak_memory_bytes", e.peak_bytes},
                           {"model_state_bytes", e.model_state_bytes},
                           {"exposed_comm_ms", round6(e.exposed_comm_ms)},
                           {"efficiency", round6(e.efficiency)},
                           {"fits", e.fits},
                           {"outcome", e.outcome},
                           {"objective", round6(e.objective)}};
  if (c.checkpoint_interval_min) j["checkpoint_interval_min"] = round6(*c.checkpoint_interval_min);
  if (e.goodput) j["goodput"] = round6(*e.goodput);
  return j;
}

}  // namespace

void write_text(std::ostream& out, const Advice& a, int top) {
  fmt::print(out, "# advise {}: objective {} ({}); {}\n", a.scenario, to_string(a.objective), unit_of(a.objective),
             a.device_bytes ? fmt::format("device {:.2f} GiB", gib(*a.device_bytes)) : "no device.memory_GB");
  fmt::print(out, "searched:\n");
  for (const std::string& axis : a.axes) fmt::print(out, "  {}\n", axis);
  fmt::print(out, "{} configurations: {} fit and completed, {} do not fit\n\n", a.ranked.size() + a.dropped.size(),
             a.ranked.size(), a.dropped.size());
  if (!a.ranked.empty()) {
    fmt::print(out, "{:<5} {:<44} {:>10} {:>11} {:>9} {:>11} {:>10} {:>12}\n", "rank", "configuration", "step_ms",
               "samples/s", "peak_GiB", "exposed_ms", "efficiency", "objective");
    const std::size_t shown = std::min<std::size_t>(a.ranked.size(), static_cast<std::size_t>(top));
    for (std::size_t i = 0; i < shown; ++i) {
      const Evaluated& e = a.ranked[i];
      fmt::print(out, "{:<5} {:<44} {:>10.1f} {:>11.1f} {:>9.2f} {:>11.1f} {:>9.1f}% {:>12.4g}\n", i + 1,
                 e.config.describe(), *e.step_ms, e.samples_per_s, gib(e.peak_bytes), e.exposed_comm_ms,
                 100 * e.efficiency, e.objective);
    }
    if (shown < a.ranked.size()) fmt::print(out, "... and {} more (--top, --json)\n", a.ranked.size() - shown);
  }
  if (!a.dropped.empty()) {
    fmt::print(out, "\ndropped: does not fit{} or did not complete, least memory first:\n",
               a.device_bytes ? fmt::format(" in {:.2f} GiB", gib(*a.device_bytes)) : std::string());
    const std::size_t shown = std::min<std::size_t>(a.dropped.size(), kDroppedShown);
    for (std::size_t i = 0; i < shown; ++i) {
      const Evaluated& e = a.dropped[i];
      if (!e.fits && a.device_bytes) {
        fmt::print(out, "  {}: needs {:.2f} GiB, {:.2f} over\n", e.config.describe(), gib(e.peak_bytes),
                   gib(e.peak_bytes - *a.device_bytes));
      } else {
        fmt::print(out, "  {}: ended in a {}\n", e.config.describe(), e.outcome);
      }
    }
    if (shown < a.dropped.size()) fmt::print(out, "  ... and {} more\n", a.dropped.size() - shown);
  }
  fmt::print(out, "\nrecommendation: {}\n", a.ranked.empty() ? "none" : a.ranked.front().config.describe());
  for (const std::string& r : a.reasons) fmt::print(out, "  - {}\n", r);
}

nlohmann::ordered_json to_json(const Advice& a) {
  nlohmann::ordered_json ranked = nlohmann::ordered_json::array(), dropped = nlohmann::ordered_json::array();
  for (const Evaluated& e : a.ranked) ranked.push_back(config_json(e));
  for (const Evaluated& e : a.dropped) dropped.push_back(config_json(e));
  return {{"scenario", a.scenario},
          {"objective", to_string(a.objective)},
          {"higher_is_better", higher_is_better(a.objective)},
          {"device_memory_bytes", a.device_bytes ? nlohmann::ordered_json(*a.device_bytes) : nlohmann::ordered_json(nullptr)},
          {"searched", a.axes},
          {"recommendation",
           {{"configuration", a.ranked.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.ranked.front().config.describe())},
            {"reasons", a.reasons},
            {"near_tie", a.near_tie.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.near_tie)}}},
          {"ranked", std::move(ranked)},
          {"dropped", std::move(dropped)}};
}

std::string to_svg(const Advice& a) {
  std::vector<present::ScatterPoint> points;
  const auto add = [&](const Evaluated& e, bool chosen) {
    if (!e.step_ms) return;
    points.push_back({gib(e.peak_bytes), *e.step_ms, e.config.fsdp() ? e.config.program : "DDP", chosen});
  };
  for (std::size_t i = 0; i < a.ranked.size(); ++i) add(a.ranked[i], i == 0);
  for (const Evaluated& e : a.dropped) add(e, false);
  return present::memory_step_svg(fmt::format("{}: step time against peak memory per GPU (objective {})", a.scenario,
                                              to_string(a.objective)),
                                  points, a.device_bytes ? std::optional<double>(gib(*a.device_bytes)) : std::nullopt);
}

}  // namespace ddpsim::advisor
