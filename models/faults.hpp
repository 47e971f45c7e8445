#pragma once
// What given ranks do differently: the faults of a scenario's `faults:` list.
// Semantics: ../shared/reference/ddp_semantics.md section 3; docs/runbook.md.
//
// A fault is its ranks and one kind; each kind is a struct that carries its
// own fields and answers an evaluator's questions itself: when it applies
// (`applies(g)`), whether its ranks still meet the others in every collective
// (`kKeepsLockstep`: the engine's rank-major schedule may run it) and whether
// every rank still issues the same operations (`kKeepsProgramUniform`:
// levelized evaluation may run it); a kind whose answers depend on its
// fields gives them as the member functions keeps_lockstep() and
// keeps_program_uniform() instead. Adding a kind: its struct here, its place
// in FaultKind and FaultType (same order), its schema entry
// (loader/schema.cpp) and its reader; a kind without the three answers
// does not compile.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace ddpsim::models {

namespace fault {

/// Forward runs, backward does not: no hook fires.
struct SkipBackward {
  int iteration = -1;  ///< global iteration (epoch * iterations + i); -1: none
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// The rank `continue`s before forward (an empty batch).
struct SkipIteration {
  int iteration = -1;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// The rank has `fewer` batches per epoch.
struct UnevenBatches {
  int fewer = 0;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int) const { return true; }
};

/// The rank issues one more collective after its step (a logged metric).
struct ExtraCollective {
  int iteration = -1;
  sim::Collective collective;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// Those parameters get no gradient on the rank in that iteration.
struct UnusedParameters {
  int iteration = -1;
  std::vector<int> parameters;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// Compute (or data loading) slower by `factor` over iterations.
struct Slowdown {
  double factor = 1;
  int from_iteration = 0;
  int to_iteration = -1;  ///< inclusive; -1: to the end
  bool data = false;      ///< data loading rather than compute
  static constexpr bool kKeepsLockstep = true;
  static constexpr bool kKeepsProgramUniform = false;  // changes one rank's durations
  bool applies(int g) const { return g >= from_iteration && (to_iteration < 0 || g <= to_iteration); }
};

/// The ring link leaving the rank has its bandwidth divided by `factor`:
/// from the start, or from `at` on (a link that slows to a trickle mid-run).
struct SlowLink {
  double factor = 1;
  std::optional<sim::Time> at;
  // From the start it prices collectives, which every member shares; from
  // a time, it changes prices mid-run, which only the engine's time order does.
  bool keeps_lockstep() const { return !at; }
  bool keeps_program_uniform() const { return !at; }
  bool applies(int) const { return true; }
};

/// Rank 0 writes logs or a checkpoint for `duration` after its step.
struct Rank0Artifact {
  int iteration = -1;  ///< the one iteration, or -1 with `every`
  int every = 0;       ///< every N iterations instead of one
  sim::Time duration;
  static constexpr bool kKeepsLockstep = true;
  static constexpr bool kKeepsProgramUniform = false;  // adds one rank's op
  bool applies(int g) const { return every > 0 ? (g + 1) % every == 0 : g == iteration; }
};

/// The process dies at the start of an iteration, or at a time.
struct Crash {
  int iteration = -1;          ///< -1 with `at`
  std::optional<sim::Time> at; ///< at this time instead of an iteration
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// The rank's network link goes down at a time (a cut cable, a dead switch
/// port, a host partitioned from the rest): the process lives on, but no
/// collective with it completes from then on.
struct LinkDown {
  sim::Time at;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int) const { return true; }
};

/// FSDP: the rank does not call one unit's module (and so none of the
/// units inside it) in every micro-step of an iteration: no all-gather, no
/// compute, no reduce-scatter for them.
struct SkipUnit {
  int iteration = -1;
  int unit = -1;       ///< index into build_units' list
  std::string module;  ///< its module path, for reports
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

/// FSDP: the rank runs `count` micro-batches in an iteration instead of
/// fsdp.gradient_accumulation (all but the last under no_sync).
struct MicroBatches {
  int iteration = -1;
  int count = 1;
  static constexpr bool kKeepsLockstep = false;
  static constexpr bool kKeepsProgramUniform = false;
  bool applies(int g) const { return g == iteration; }
};

}  // namespace fault

/// The kinds, in FaultType's order.
using FaultKind = std::variant<fault::SkipBackward, fault::SkipIteration, fault::UnevenBatches, fault::ExtraCollective,
                               fault::UnusedParameters, fault::Slowdown, fault::SlowLink, fault::Rank0Artifact,
                               fault::Crash, fault::SkipUnit, fault::MicroBatches, fault::LinkDown>;

/// A kind's name, for sets and reports (the index of its FaultKind alternative).
enum class FaultType {
  kSkipBackward,
  kSkipIteration,
  kUnevenBatches,
  kExtraCollective,
  kUnusedParameters,
  kSlowdown,
  kSlowLink,
  kRank0Artifact,
  kCrash,
  kSkipUnit,      ///< FSDP only
  kMicroBatches,  ///< FSDP only
  kLinkDown,
};
inline constexpr std::size_t kFaultTypes = std::variant_size_v<FaultKind>;
static_assert(static_cast<std::size_t>(FaultType::kLinkDown) + 1 == kFaultTypes, "FaultType follows FaultKind");
/// "skip_backward", ... (the scenario's `type`).
std::string_view to_string(FaultType type);

/// One fault of the scenario: its ranks and its kind.
struct Fault {
  std::vector<int> ranks;  ///< the ranks it applies to
  FaultKind kind;

  FaultType type() const { return static_cast<FaultType>(kind.index()); }
  /// The kind's fields if it is a K, else nullptr.
  template <class K>
  const K* as() const {
    return std::get_if<K>(&kind);
  }
  bool has_rank(int rank) const;
  /// Applies to `rank` in global iteration `g`.
  bool applies(int rank, int g) const {
    return has_rank(rank) && std::visit([g](const auto& k) { return k.applies(g); }, kind);
  }
  bool keeps_lockstep() const {
    return std::visit(
        [](const auto& k) {
          if constexpr (requires { k.keeps_lockstep(); }) return k.keeps_lockstep();
          else return k.kKeepsLockstep;
        },
        kind);
  }
  bool keeps_program_uniform() const {
    return std::visit(
        [](const auto& k) {
          if constexpr (requires { k.keeps_program_uniform(); }) return k.keeps_program_uniform();
          else return k.kKeepsProgramUniform;
        },
        kind);
  }
};

/// The batches `rank` misses per epoch: the most any uneven_batches fault of its gives.
int fewer_batches(const std::vector<Fault>& faults, int rank);

}  // namespace ddpsim::models
