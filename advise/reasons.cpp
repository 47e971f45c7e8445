#include "advise/reasons.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace ddpsim::advisor {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

using Same = std::function<bool(const Configuration&)>;

const Evaluated* first_of(const std::vector<Evaluated>& list, const Same& same) {
  for (const Evaluated& e : list) {
    if (same(e.config)) return &e;
  }
  return nullptr;
}

// The best configuration equal to `c` but for what `differs` changes.
const Evaluated* alternative(const Advice& a, const Configuration& c, const Same& differs) {
  return first_of(a.ranked, [&](const Configuration& x) { return differs(x) && x.world_size == c.world_size; });
}

double better_pct(Objective o, double best, double other) {
  return higher_is_better(o) ? 100 * (best / other - 1) : 100 * (other / best - 1);
}

// "4.2 % better throughput", or for a small margin a warning that it is one.
std::string margin(const Advice& a, double best, double other) {
  const double pct = better_pct(a.objective, best, other);
  if (pct < 0) {  // a near tie kept the recommendation over a slightly better one
    return fmt::format("{:.1f} % worse {}: a near tie, kept as said above", -pct, to_string(a.objective));
  }
  if (pct < kNearTiePct) {
    return fmt::format("{:.1f} % better {}: a near tie, within what the model's error can tell apart", pct,
                       to_string(a.objective));
  }
  return fmt::format("{:.1f} % better {}", pct, to_string(a.objective));
}

std::string program_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  const Same other_family = [&](const Configuration& x) { return x.fsdp() != c.fsdp(); };
  if (c.fsdp()) {
    const bool ddp_fits = first_of(a.ranked, [&](const Configuration& x) { return !x.fsdp() && x.world_size == c.world_size; });
    const Evaluated* smallest = first_of(a.dropped, [&](const Configuration& x) { return !x.fsdp() && x.world_size == c.world_size; });
    if (!ddp_fits && smallest && a.device_bytes) {
      return fmt::format("{}: DDP needs {:.1f} GiB per GPU at W={} ({:.1f} GiB of it parameters, gradients and optimizer "
                         "states, on every GPU); {:.1f} GiB available",
                         c.program, gib(smallest->peak_bytes), c.world_size, gib(smallest->model_state_bytes),
                         gib(*a.device_bytes));
    }
  }
  const Evaluated* rival = alternative(a, c, other_family);
  if (!rival) return {};
  return fmt::format("{} over {}'s best configuration ({}): {}; it exposes {:.1f} ms of communication a step "
                     "against {:.1f}",
                     c.fsdp() ? "FSDP " + c.program : std::string("DDP"), c.fsdp() ? "DDP" : "FSDP",
                     rival->config.describe(), margin(a, best.objective, rival->objective), best.exposed_comm_ms,
                     rival->exposed_comm_ms);
}

bool same_but(const Configuration& x, const Configuration& c, bool cap, bool accumulation, bool checkpointing) {
  return x.program == c.program && x.world_size == c.world_size && (cap || x.bucket_cap_mb == c.bucket_cap_mb) &&
         (accumulation || x.accumulation == c.accumulation) && (checkpointing || x.checkpointing == c.checkpointing);
}

std::string cap_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  if (c.fsdp() || c.bucket_cap_mb == a.scenario_cap_mb) return {};
  const Evaluated* at_own = first_of(a.ranked, [&](const Configuration& x) {
    return same_but(x, c, true, false, false) && x.bucket_cap_mb == a.scenario_cap_mb;
  });
  if (!at_own) return {};
  return fmt::format("bucket_cap_mb {:g} rather than the scenario's {:g}: {:.1f} ms of communication exposed a step "
                     "against {:.1f}; {}",
                     c.bucket_cap_mb, a.scenario_cap_mb, best.exposed_comm_ms, at_own->exposed_comm_ms,
                     margin(a, best.objective, at_own->objective));
}

// A comm hook that wins (or the scenario's that loses to none): against the best run without one.
std::string hook_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  if (c.fsdp() || c.comm_hook == "allreduce") return {};
  const Evaluated* plain = first_of(a.ranked, [&](const Configuration& x) {
    return x.program == c.program && x.world_size == c.world_size && x.comm_hook == "allreduce" &&
           x.accumulation == c.accumulation && x.checkpointing == c.checkpointing;
  });
  if (!plain) return {};
  const double less = plain->exposed_comm_ms > 0 ? 100 * (1 - best.exposed_comm_ms / plain->exposed_comm_ms) : 0;
  return fmt::format("{}: {:.0f} % less exposed communication ({:.1f} ms a step against {:.1f} with no hook, {}); {}",
                     c.comm_hook, less, best.exposed_comm_ms, plain->exposed_comm_ms, plain->config.describe(),
                     margin(a, best.objective, plain->objective));
}

std::string accumulation_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  if (c.accumulation == 1) return {};
  const Evaluated* fewer = first_of(a.ranked, [&](const Configuration& x) {
    return same_but(x, c, false, true, false) && x.accumulation < c.accumulation;
  });
  if (!fewer) return {};
  const auto per_sample = [](const Evaluated& e) { return 1e3 * e.exposed_comm_ms / static_cast<double>(e.global_batch); };
  return fmt::format("gradient accumulation {}: one reduction every {} micro-batches, {:.2f} us of exposed "
                     "communication a sample against {:.2f} with {}; {}",
                     c.accumulation, c.accumulation, per_sample(best), per_sample(*fewer),
                     fewer->config.accumulation, margin(a, best.objective, fewer->objective));
}

std::string checkpointing_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  if (!c.checkpointing) return {};
  const Same without = [&](const Configuration& x) { return same_but(x, c, false, false, true) && !x.checkpointing; };
  if (const Evaluated* d = first_of(a.dropped, without); d && a.device_bytes) {
    return fmt::format("activation checkpointing: without it this configuration needs {:.1f} GiB per GPU, {:.1f} over",
                       gib(d->peak_bytes), gib(d->peak_bytes - *a.device_bytes));
  }
  return {};
}

std::string world_reason(const Advice& a, const Evaluated& best) {
  const Configuration& c = best.config;
  const Evaluated* other = first_of(a.ranked, [&](const Configuration& x) {
    return x.program == c.program && x.bucket_cap_mb == c.bucket_cap_mb && x.accumulation == c.accumulation &&
           x.checkpointing == c.checkpointing && x.world_size != c.world_size;
  });
  if (!other) return {};
  return fmt::format("W={} rather than {}: {} against {} (scaling efficiency {:.1f} % against {:.1f} %)", c.world_size,
                     other->config.world_size, format_objective(a.objective, best.objective),
                     format_objective(a.objective, other->objective), 100 * best.efficiency, 100 * other->efficiency);
}

}  // namespace

std::string format_objective(Objective o, double value) {
  switch (o) {
    case Objective::kStep: return fmt::format("{:.1f} ms a step", value);
    case Objective::kThroughput: return fmt::format("{:.1f} samples/s", value);
    case Objective::kGpuHours: return fmt::format("{:.3f} GPU-hours a million samples", value);
    case Objective::kGoodput: return fmt::format("{:.1f} samples/s after failures", value);
  }
  return {};
}

std::vector<std::string> reasons(const Advice& a) {
  if (a.ranked.empty()) {
    if (a.dropped.empty()) return {"no configuration completed"};
    const Evaluated& least = a.dropped.front();
    if (!least.fits && a.device_bytes) {
      return {fmt::format("nothing fits: the smallest, {}, needs {:.1f} GiB per GPU; {:.1f} GiB available",
                          least.config.describe(), gib(least.peak_bytes), gib(*a.device_bytes))};
    }
    return {fmt::format("no configuration completed: {} ended in a {}", least.config.describe(), least.outcome)};
  }
  const Evaluated& best = a.ranked.front();
  std::vector<std::string> out;
  if (!a.near_tie.empty()) out.push_back(a.near_tie);
  for (const auto& why : {program_reason, checkpointing_reason, hook_reason, cap_reason, accumulation_reason, world_reason}) {
    std::string r = why(a, best);
    if (!r.empty()) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ddpsim::advisor
