#include "advise/advisor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "advise/reasons.hpp"
#include "models/restart.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "loader/variant.hpp"
#include "sweep/wire.hpp"

namespace ddpsim::advisor {

// A configuration and its prediction on the wire of split runs (sweep/wire.hpp), field by field.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Configuration, program, bucket_cap_mb, comm_hook, accumulation, world_size,
                                   checkpointing, checkpoint_interval_min)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Evaluated, config, global_batch, step_ms, samples_per_s, efficiency, exposed_comm_ms,
                                   peak_bytes, model_state_bytes, goodput, fits, outcome, objective)

namespace {

using scenarios::InputError;
using scenarios::KeyEdit;

constexpr double kDefaultCaps[] = {1, 5, 25, 50, 100};
constexpr std::int64_t kMaxAccumulation = 1 << 20;
constexpr int kMeasuredIterations = 3;  // after warm-up: a healthy step repeats, so more add nothing but time

// The model's blocks as module-path patterns: for each parameter, its path
// up to the first numbered component ("transformer.h.3.attn.c_attn.weight"
// -> "transformer.h.*"), in order of first appearance. What activation
// checkpointing and FSDP's wrap policy apply to when the scenario names none.
std::vector<std::string> block_patterns(const models::ModelSpec& model) {
  std::vector<std::string> out;
  for (const models::Tensor& t : model.parameters) {
    std::string prefix;
    std::size_t at = 0;
    for (std::size_t dot = t.name.find('.'); dot != std::string::npos; dot = t.name.find('.', at)) {
      const std::string part = t.name.substr(at, dot - at);
      if (!prefix.empty() && !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const std::string pattern = prefix + ".*";
        if (std::find(out.begin(), out.end(), pattern) == out.end()) out.push_back(pattern);
        break;
      }
      prefix += (prefix.empty() ? "" : ".") + part;
      at = dot + 1;
    }
  }
  return out;
}

std::string yaml_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

bool has_checkpointing(const models::ModelSpec& m) {
  return std::any_of(m.checkpointed.begin(), m.checkpointed.end(), [](int c) { return c >= 0; });
}

// One structural variant: a program, with or without checkpointing, (DDP) a comm hook, as key edits.
struct Variant {
  std::string program;
  bool checkpointing = false;
  std::string hook = "allreduce";
  std::vector<KeyEdit> edits;
};

// "fp16_compress", "powerSGD r4": a hook as advise names it.
std::string hook_label(const models::CommHook& h) {
  std::string s(models::to_string(h.kind));
  if (h.powersgd_family()) s += fmt::format(" r{}", h.powersgd.matrix_approximation_rank);
  return s;
}

// One hook to try: its label and the edits that set it (none: the scenario's own).
struct HookChoice {
  std::string label;
  std::vector<KeyEdit> edits;
};

// The comm hooks DDP is tried with: the scenario's own, no hook, the
// half-precision casts (bf16 on NCCL only: gloo cannot all-reduce it) and
// PowerSGD at rank 1 and 4 (NCCL only: on gloo its callbacks race the next
// bucket's all-reduce, docs/cost-models.md#communication-hooks), compressing
// from the third step, which the warm-up then holds.
std::vector<HookChoice> hook_axis(const scenarios::Scenario& base, std::vector<std::string>& notes) {
  const bool nccl = base.job.backend == models::Backend::kNccl;
  std::vector<HookChoice> out{{hook_label(base.job.ddp.comm_hook), {}}};
  const int warm = std::max(3, base.job.warmup_iterations);
  const std::string warmup = std::to_string(warm);
  const std::string iterations = std::to_string(std::max(base.job.iterations, warm + kMeasuredIterations));
  std::vector<HookChoice> others{{"allreduce", {{"ddp.comm_hook", std::nullopt}}},
                                 {"fp16_compress", {{"ddp.comm_hook", "fp16_compress"}}}};
  if (nccl) others.push_back({"bf16_compress", {{"ddp.comm_hook", "bf16_compress"}}});
  for (int rank : {1, 4}) {
    if (!nccl) break;
    others.push_back({fmt::format("powerSGD r{}", rank),
                      {{"ddp.comm_hook", fmt::format("{{name: powerSGD, matrix_approximation_rank: {}, "
                                                     "start_powerSGD_iter: 2}}", rank)},
                       {"training.warmup_iterations", warmup},
                       {"training.iterations", iterations}}});
  }
  if (!nccl) notes.push_back("comm hook: no PowerSGD and no bf16_compress on gloo (bfloat16 is not all-reduced; "
                             "PowerSGD's callbacks race the next bucket's all-reduce for gloo's collective order)");
  for (HookChoice& h : others) {
    if (h.label != out.front().label) out.push_back(std::move(h));
  }
  return out;
}

std::vector<Variant> variants(const scenarios::Scenario& base, const std::vector<std::string>& blocks, bool multi_node,
                              const std::vector<std::string>& only, const std::vector<HookChoice>& hooks) {
  const bool base_checkpoints = has_checkpointing(base.job.model);
  std::vector<std::optional<bool>> ac = {false};
  if (base_checkpoints || !blocks.empty()) ac.push_back(true);
  std::vector<std::string> programs = {"DDP", "FULL_SHARD", "SHARD_GRAD_OP"};
  if (multi_node) programs.insert(programs.end(), {"HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"});
  if (!only.empty()) {
    std::erase_if(programs, [&](const std::string& p) { return std::find(only.begin(), only.end(), p) == only.end(); });
  }
  const bool has_wrap = base.fsdp && (base.fsdp->wrap.min_num_params || !base.fsdp->wrap.modules.empty());
  std::vector<Variant> out;
  for (const std::string& program : programs) {
    for (const auto& on : ac) {
      Variant v{program, *on, "allreduce", {{"faults", std::nullopt}}};  // healthy steps: faults are runs of their own
      if (program == "DDP") {
        v.edits.insert(v.edits.end(), {{"parallelism", "ddp"}, {"fsdp", std::nullopt}});
      } else {
        v.edits.insert(v.edits.end(), {{"parallelism", "fsdp"}, {"ddp", std::nullopt}, {"fsdp.sharding_strategy", program}});
        if (!has_wrap && !blocks.empty()) v.edits.push_back({"fsdp.auto_wrap_policy", "{module_classes: " + yaml_list(blocks) + "}"});
      }
      if (!*on) {
        v.edits.push_back({"model.activation_checkpointing", std::nullopt});
      } else if (!base_checkpoints) {
        v.edits.push_back({"model.activation_checkpointing", yaml_list(blocks)});
      }
      if (program != "DDP") {
        v.hook.clear();  // FSDP has no comm hook here
        out.push_back(std::move(v));
        continue;
      }
      for (const HookChoice& h : hooks) {
        Variant hooked = v;
        hooked.hook = h.label;
        hooked.edits.insert(hooked.edits.end(), h.edits.begin(), h.edits.end());
        out.push_back(std::move(hooked));
      }
    }
  }
  return out;
}

int base_accumulation(const scenarios::Scenario& s) {
  return s.fsdp ? s.fsdp->gradient_accumulation : s.job.ddp.gradient_accumulation;
}

// The accumulations to try: the scenario's without a batch range, else every
// power of two that puts some world size's global batch in it.
std::vector<int> accumulations(const scenarios::Scenario& base, const AdviseOptions& o, const std::vector<int>& worlds) {
  if (!o.global_batch_min) return {base_accumulation(base)};
  std::vector<int> out;
  const std::int64_t local = base.job.local_batch_size;
  for (std::int64_t a = 1; a <= kMaxAccumulation; a *= 2) {
    const bool reaches = std::any_of(worlds.begin(), worlds.end(), [&](int w) {
      const std::int64_t g = local * w * a;
      return g >= *o.global_batch_min && g <= *o.global_batch_max;
    });
    if (reaches) out.push_back(static_cast<int>(a));
  }
  if (out.empty()) {
    throw InputError({"the command line", 0, 0}, "--global-batch",
                     fmt::format("{}:{}", *o.global_batch_min, *o.global_batch_max),
                     fmt::format("expected a range some world size reaches with local batch {} and accumulation a "
                                 "power of two",
                                 local));
  }
  return out;
}

std::vector<double> cap_axis(const scenarios::Scenario& base) {
  if (base.sweep.bucket_caps_mb.size() > 1) return base.sweep.bucket_caps_mb;
  std::vector<double> caps(std::begin(kDefaultCaps), std::end(kDefaultCaps));
  const double own = base.sweep.bucket_caps_mb.front();
  if (std::find(caps.begin(), caps.end(), own) == caps.end()) caps.push_back(own);
  std::sort(caps.begin(), caps.end());
  return caps;
}

// Goodput under the scenario's failures: the better of its checkpoint
// interval and Daly's optimum, each simulated over the horizon.
void add_goodput(const scenarios::Scenario& s, Evaluated& e) {
  const auto& failures = s.resilience.failures;
  const auto& checkpoint = s.resilience.checkpoint;
  if (!failures || !checkpoint) return;
  const int w = e.config.world_size;
  const models::RestartReport own = models::simulate_restarts(*failures, *checkpoint, w, s.seed);
  models::CheckpointSpec daly = *checkpoint;
  daly.interval = sim::Time::from_ms(own.daly_minutes * 60e3, "Daly's checkpoint interval (checkpoint.* and failures.*)");
  const models::RestartReport at_daly = models::simulate_restarts(*failures, daly, w, s.seed);
  const bool daly_better = own.daly_minutes > 0 && at_daly.goodput > own.goodput;
  e.goodput = daly_better ? at_daly.goodput : own.goodput;
  e.config.checkpoint_interval_min = (daly_better ? daly.interval : checkpoint->interval).ms() / 60e3;
}

double objective_of(Objective o, const Evaluated& e) {
  switch (o) {
    case Objective::kStep: return *e.step_ms;
    case Objective::kThroughput: return e.samples_per_s;
    case Objective::kGpuHours: return e.config.world_size * (*e.step_ms / 3.6e6) * (1e6 / static_cast<double>(e.global_batch));
    case Objective::kGoodput: return e.samples_per_s * e.goodput.value_or(1);
  }
  return 0;
}

Evaluated evaluate_row(const scenarios::Scenario& s, const scenarios::SweepRow& row, Configuration c, Objective o) {
  Evaluated e;
  c.world_size = row.run.world_size;
  c.bucket_cap_mb = c.fsdp() ? 0 : row.bucket_cap_mb;
  e.config = c;
  e.global_batch = row.run.global_batch;
  e.peak_bytes = row.memory.peak();
  e.model_state_bytes = row.memory.model_states();
  e.fits = !s.memory.device_bytes || e.peak_bytes <= *s.memory.device_bytes;
  e.outcome = std::string(models::to_string(row.run.outcome));
  if (row.run.outcome != models::Outcome::kCompleted || !row.run.step_ms) return e;
  e.step_ms = row.run.step_ms;
  e.samples_per_s = static_cast<double>(e.global_batch) / (*e.step_ms / 1e3);
  e.efficiency = row.efficiency.value_or(0);
  e.exposed_comm_ms = row.run.ranks.empty() ? 0 : row.run.ranks[0].exposed_comm_ms;
  add_goodput(s, e);
  e.objective = objective_of(o, e);
  return e;
}

// Runs one structural variant at one accumulation over its caps and world sizes.
void run_variant(scenarios::Scenario s, const Variant& v, int accumulation, std::vector<int> worlds,
                 const std::vector<double>& caps, const AdviseOptions& o, std::vector<Evaluated>& out) {
  if (s.fsdp) {
    s.fsdp->gradient_accumulation = accumulation;
  } else {
    s.job.ddp.gradient_accumulation = accumulation;
  }
  s.job.epochs = 1;
  s.job.iterations = std::min(s.job.iterations, s.job.warmup_iterations + kMeasuredIterations);
  const std::int64_t local = s.job.local_batch_size;
  const int per_node = s.job.cluster ? s.job.cluster->gpus_per_node : 0;
  std::erase_if(worlds, [&](int w) {
    const std::int64_t g = local * w * accumulation;
    if (o.global_batch_min && (g < *o.global_batch_min || g > *o.global_batch_max)) return true;
    // Hybrid sharding on one node is FULL_SHARD or SHARD_GRAD_OP; it needs whole nodes.
    return s.fsdp && models::is_hybrid(s.fsdp->sharding) && (w <= per_node || w % per_node != 0);
  });
  if (worlds.empty()) return;
  s.sweep.world_sizes = worlds;
  s.sweep.bucket_caps_mb = s.fsdp ? std::vector<double>{s.sweep.bucket_caps_mb.front()} : caps;
  s.job = scenarios::with_cap(std::move(s.job), s.sweep.bucket_caps_mb.front());
  const scenarios::SweepResult r = scenarios::run_scenario(s, nullptr, o.threads);
  Configuration c{v.program, 0, v.hook, accumulation, 0, v.checkpointing, std::nullopt};
  for (const scenarios::SweepRow& row : r.rows) out.push_back(evaluate_row(s, row, c, o.objective));
}

// Every process's results on the first, in sweep order: what one process
// would have found, in the order it would have found them.
std::vector<Evaluated> gather_results(const Partition& p, const std::vector<std::pair<std::size_t, Evaluated>>& mine) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [unit, e] : mine) list.push_back({{"unit", unit}, {"evaluated", e}});
  const std::vector<std::string> parts = p.gather(scenarios::to_wire(list));
  std::vector<std::pair<std::size_t, Evaluated>> all;
  if (p.index != 0) return {};
  for (const std::string& part : parts) {
    const nlohmann::json units = scenarios::from_wire(part, "a process's configurations");
    try {
      for (const nlohmann::json& j : units) all.emplace_back(j.at("unit").get<std::size_t>(), j.at("evaluated").get<Evaluated>());
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(std::string("a process's configurations could not be read: ") + e.what());
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Evaluated> out;
  for (auto& [unit, e] : all) out.push_back(std::move(e));
  return out;
}

std::vector<std::string> describe_axes(const std::vector<Variant>& vs, const std::vector<double>& caps,
                                       const std::vector<int>& accs, const std::vector<int>& worlds,
                                       const std::vector<std::string>& blocks, const scenarios::Scenario& base) {
  std::set<std::string> programs;
  for (const Variant& v : vs) programs.insert(v.program);
  std::vector<std::string> out;
  out.push_back("program: " + fmt::format("{}", fmt::join(programs, ", ")));
  out.push_back("bucket_cap_mb (DDP): " + fmt::format("{}", fmt::join(caps, ", ")));
  std::vector<std::string> hooks;
  for (const Variant& v : vs) {
    if (v.program == "DDP" && std::find(hooks.begin(), hooks.end(), v.hook) == hooks.end()) hooks.push_back(v.hook);
  }
  if (!hooks.empty()) {
    out.push_back(fmt::format("comm hook (DDP): {} (rates: the scenario's for its own hook, else ddpsim's stated "
                              "defaults)", fmt::join(hooks, ", ")));
  }
  out.push_back("gradient accumulation: " + fmt::format("{}", fmt::join(accs, ", ")));
  out.push_back("world size: " + fmt::format("{}", fmt::join(worlds, ", ")));
  if (has_checkpointing(base.job.model)) {
    out.push_back("activation checkpointing: none, or the scenario's");
  } else if (!blocks.empty()) {
    out.push_back("activation checkpointing: none, or " + yaml_list(blocks));
  }
  if (base.resilience.failures && base.resilience.checkpoint) {
    out.push_back("checkpoint interval: the scenario's, or Daly's optimum, whichever leaves more goodput");
  }
  if (!base.job.faults.empty()) out.push_back("faults: left out (advise compares healthy steps; ddpsim run prices them)");
  return out;
}

}  // namespace

std::string_view to_string(Objective o) {
  switch (o) {
    case Objective::kStep: return "step";
    case Objective::kThroughput: return "throughput";
    case Objective::kGpuHours: return "gpu_hours";
    case Objective::kGoodput: return "goodput";
  }
  return "?";
}

std::optional<Objective> parse_objective(std::string_view name) {
  for (Objective o : {Objective::kStep, Objective::kThroughput, Objective::kGpuHours, Objective::kGoodput}) {
    if (to_string(o) == name) return o;
  }
  return std::nullopt;
}

const std::vector<std::string>& known_programs() {
  static const std::vector<std::string> names = {"DDP", "FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"};
  return names;
}

bool higher_is_better(Objective o) { return o == Objective::kThroughput || o == Objective::kGoodput; }

std::string Configuration::describe() const {
  std::string s = program;
  if (!fsdp()) s += fmt::format(" cap {:g}", bucket_cap_mb);
  if (!fsdp() && comm_hook != "allreduce") s += ", " + comm_hook;
  s += fmt::format(", accum {}, W={}", accumulation, world_size);
  if (checkpointing) s += ", AC";
  if (checkpoint_interval_min) s += fmt::format(", ckpt {:.0f} min", *checkpoint_interval_min);
  return s;
}

namespace {

// This process's share of the search (every count-th sweep): each variant,
// loaded as its file would be, at each accumulation over its caps and world
// sizes; (sweep index, result). A variant the loader refuses goes to `left_out`.
std::vector<std::pair<std::size_t, Evaluated>> simulate_variants(const std::string& text, const std::string& scenario_path,
                                                                 const std::vector<Variant>& vs, const std::vector<int>& accs,
                                                                 const std::vector<int>& worlds, const std::vector<double>& caps,
                                                                 const AdviseOptions& o, std::vector<std::string>& left_out) {
  std::vector<std::pair<std::size_t, Evaluated>> mine;  // (sweep index, result): this process's share
  std::size_t unit = 0;
  const Partition& part = o.partition;
  for (const Variant& v : vs) {
    std::optional<scenarios::Scenario> s;
    try {
      s = scenarios::parse_variant(text, scenario_path, v.edits);
    } catch (const InputError& e) {
      if (vs.size() == 1) throw;
      std::string why = e.what();
      if (const auto at = why.find(": key '"); at != std::string::npos) why = why.substr(at + 2);
      const std::string what = v.hook.empty() || v.hook == "allreduce" ? v.program : v.program + " with " + v.hook;
      const std::string note = fmt::format("{}: left out, the scenario refuses it: {}", what, why);
      if (std::find(left_out.begin(), left_out.end(), note) == left_out.end()) left_out.push_back(note);
      continue;
    }
    for (int a : accs) {
      const std::size_t u = unit++;
      if (static_cast<int>(u % static_cast<std::size_t>(part.count)) != part.index) continue;
      std::vector<Evaluated> found;
      run_variant(*s, v, a, worlds, caps, o, found);
      for (Evaluated& e : found) mine.emplace_back(u, std::move(e));
    }
  }
  return mine;
}

}  // namespace

std::array<int, 3> change_cost(const Configuration& c, const Configuration& s) {
  const bool ddp = !c.fsdp();
  // Each change weighed by what it asks of the user: a bucket cap is one argument (1); a comm hook,
  // gradient accumulation or activation checkpointing is code and changes what the step computes (2);
  // another sharding strategy is one argument of FSDP (2); DDP to FSDP or back is a new program:
  // wrapping, checkpoints, memory and numerics to revalidate (4).
  const int program = c.program == s.program ? 0 : c.fsdp() != s.fsdp() ? 4 : 2;
  const int from_scenario = program + (ddp && c.bucket_cap_mb != s.bucket_cap_mb) +
                            2 * (ddp && c.comm_hook != s.comm_hook) + 2 * (c.accumulation != s.accumulation) +
                            2 * (c.checkpointing != s.checkpointing);
  const int from_defaults = (ddp && c.bucket_cap_mb != 25) + (ddp && c.comm_hook != "allreduce") +
                            (c.accumulation != 1) + c.checkpointing;
  const int complexity = c.fsdp() + (ddp && c.comm_hook != "allreduce") + c.checkpointing;
  return {from_scenario, from_defaults, complexity};
}

namespace {

}  // namespace

void order_near_tie(Advice& a) {
  if (a.ranked.size() < 2) return;
  const Evaluated& best = a.ranked.front();
  const auto pct = [&](const Evaluated& e) {
    return higher_is_better(a.objective) ? 100 * (best.objective / e.objective - 1)
                                         : 100 * (e.objective / best.objective - 1);
  };
  // A slower configuration goes first only when it keeps the user's own settings (nothing changed
  // from the scenario); between equal objectives, the one that asks least of the user.
  std::size_t chosen = 0;
  for (std::size_t i = 1; i < a.ranked.size() && pct(a.ranked[i]) < kNearTiePct; ++i) {
    const auto mine = change_cost(a.ranked[i].config, a.scenario_config);
    const auto theirs = change_cost(a.ranked[chosen].config, a.scenario_config);
    const bool keeps_own = mine[0] == 0 && theirs[0] > 0;
    const bool exact_tie = a.ranked[i].objective == best.objective && mine < theirs;
    if (keeps_own || exact_tie) chosen = i;
  }
  if (chosen == 0) return;
  const std::array<int, 3> mine = change_cost(a.ranked[chosen].config, a.scenario_config);
  const std::array<int, 3> theirs = change_cost(best.config, a.scenario_config);
  const std::string why = mine[0] != theirs[0]   ? fmt::format("it keeps more of the scenario's settings ({} changed "
                                                                    "against {})", mine[0], theirs[0])
                          : mine[1] != theirs[1] ? fmt::format("it is nearer PyTorch's defaults ({} changed against "
                                                               "{})", mine[1], theirs[1])
                                                 : "the simpler program (DDP over FSDP, no hook over a hook, no "
                                                   "activation checkpointing)";
  a.near_tie = fmt::format("{} kept: {} is {:.1f} % better {}, a near tie (under {:g} %, within what the model's "
                           "error can tell apart), and {}",
                           a.ranked[chosen].config.describe(), best.config.describe(), pct(a.ranked[chosen]),
                           to_string(a.objective), kNearTiePct, why);
  std::rotate(a.ranked.begin(), a.ranked.begin() + static_cast<std::ptrdiff_t>(chosen),
              a.ranked.begin() + static_cast<std::ptrdiff_t>(chosen) + 1);
}

Advice advise(const std::string& scenario_path, const AdviseOptions& o) {
  return advise_text(scenarios::read_scenario_text(scenario_path), scenario_path, o);
}

Advice advise_text(const std::string& text, const std::string& scenario_path, const AdviseOptions& o) {
  const scenarios::Scenario base = scenarios::parse_scenario(text, scenario_path);
  if (o.objective == Objective::kGoodput && !(base.resilience.failures && base.resilience.checkpoint)) {
    throw InputError({scenario_path, 0, 0}, "--objective", "goodput",
                     "expected a scenario with failures and checkpoint sections (what goodput is computed from)");
  }
  const std::vector<int> worlds = o.world_sizes.empty() ? base.sweep.world_sizes : o.world_sizes;
  for (int w : o.world_sizes) scenarios::check_fits_cluster(base, w, "--world-size");
  const bool multi_node = base.job.cluster && base.job.cluster->nodes > 1;
  const std::vector<std::string> blocks = block_patterns(base.job.model);
  for (const std::string& p : o.programs) {
    const auto& known = known_programs();
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      throw InputError({"the command line", 0, 0}, "--programs", p,
                       fmt::format("expected some of {}", fmt::join(known, ", ")));
    }
  }
  std::vector<std::string> hook_notes;
  const std::vector<HookChoice> hooks = hook_axis(base, hook_notes);
  const std::vector<Variant> vs = variants(base, blocks, multi_node, o.programs, hooks);
  if (vs.empty()) {
    throw InputError({"the command line", 0, 0}, "--programs", fmt::format("{}", fmt::join(o.programs, ",")),
                     "expected a program that applies: hybrid sharding needs a cluster of more than one node");
  }
  const std::vector<int> accs = accumulations(base, o, worlds);
  const std::vector<double> caps = cap_axis(base);
  std::vector<std::string> left_out;  // variants the loader refuses (e.g. FSDP with a straggler model)
  const std::vector<std::pair<std::size_t, Evaluated>> mine = simulate_variants(text, scenario_path, vs, accs, worlds, caps, o, left_out);
  const Partition& part = o.partition;
  std::vector<Evaluated> all;
  if (part.count > 1) {
    all = gather_results(part, mine);
  } else {
    for (const auto& [u, e] : mine) all.push_back(e);
  }
  Advice advice;
  advice.complete = part.index == 0;
  if (!advice.complete) return advice;
  advice.scenario = base.name;
  advice.objective = o.objective;
  advice.device_bytes = base.memory.device_bytes;
  advice.scenario_cap_mb = base.sweep.bucket_caps_mb.front();
  advice.axes = describe_axes(vs, caps, accs, worlds, blocks, base);
  if (std::any_of(vs.begin(), vs.end(), [](const Variant& v) { return v.program == "DDP"; })) {
    advice.axes.insert(advice.axes.end(), hook_notes.begin(), hook_notes.end());
  }
  advice.axes.insert(advice.axes.end(), left_out.begin(), left_out.end());
  advice.scenario_config = {base.fsdp ? std::string(models::to_string(base.fsdp->sharding)) : "DDP",
                            base.sweep.bucket_caps_mb.front(),
                            base.fsdp ? "allreduce" : hook_label(base.job.ddp.comm_hook),
                            base_accumulation(base),
                            0,
                            has_checkpointing(base.job.model),
                            std::nullopt};
  for (Evaluated& e : all) (e.fits && e.step_ms ? advice.ranked : advice.dropped).push_back(std::move(e));
  const bool higher = higher_is_better(o.objective);
  std::stable_sort(advice.ranked.begin(), advice.ranked.end(), [&](const Evaluated& a, const Evaluated& b) {
    if (a.objective != b.objective) return higher ? a.objective > b.objective : a.objective < b.objective;
    return a.config.describe() < b.config.describe();
  });
  std::stable_sort(advice.dropped.begin(), advice.dropped.end(), [](const Evaluated& a, const Evaluated& b) {
    if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    return a.config.describe() < b.config.describe();
  });
  order_near_tie(advice);
  advice.reasons = reasons(advice);
  return advice;
}

}  // namespace ddpsim::advisor
