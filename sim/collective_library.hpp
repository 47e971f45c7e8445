#pragma once
// How a collective library treats collectives: what it sends for one, what
// it runs before each (a debug check), what it does when the members of one
// disagree, and what a peer's death does to the others. The engine and the
// levelized evaluator ask it; models/collective_library.hpp implements
// PyTorch's NCCL and gloo process groups. sim/ holds none of their rules.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/op_sink.hpp"

namespace ddpsim::sim {

struct RankFailure {
  int rank = 0;
  std::string message;
};

/// What happens to a collective whose members issued different ones.
struct Verdict {
  enum Kind : std::uint8_t {
    kRuns,   ///< it runs as its first member's (what each sends agrees)
    kStalls, ///< it never completes: a hang, which the watchdog may end
    kFails,  ///< `failures`' ranks die, in order, with their messages
  } kind = kStalls;
  std::vector<RankFailure> failures;
};

class CollectiveLibrary {
 public:
  virtual ~CollectiveLibrary() = default;
  /// What runs for `c`: what the cost model prices.
  virtual Collective as_sent(Collective c) const { return c; }
  /// A collective each member runs before every collective of a group of
  /// `members` ranks (a debug check), priced with it; none by default.
  virtual std::optional<Collective> check_before(int members) const {
    (void)members;
    return std::nullopt;
  }
  /// Collective `seq` of a group whose members (ranks, in group order)
  /// issued `issued` (by position), not all alike (in kind, size or
  /// label). By default it runs if what each sends agrees (sends_alike),
  /// and stalls otherwise.
  virtual Verdict on_mismatch(std::uint64_t seq, const std::vector<int>& members,
                              const std::vector<Collective>& issued) const;
  /// Collective `seq`, which on_mismatch lets run, whose members issued it
  /// under different labels (`labels`, by position): the same kind and size,
  /// other data. A check that reads the data may fail them (FSDP's
  /// forward-order check); none (the default): it runs on the wrong data.
  virtual std::optional<Verdict> on_label_mismatch(std::uint64_t seq, const std::vector<int>& members,
                                                   const std::vector<OpLabel>& labels) const {
    (void)seq, (void)members, (void)labels;
    return std::nullopt;
  }
  /// Rank `dead` died: the message a live member that waits in a collective
  /// with it, or arrives in one later, fails with; none (the default): it waits.
  virtual std::optional<std::string> peer_died(int dead) const {
    (void)dead;
    return std::nullopt;
  }
  /// Whether every member sends (as_sent) what the first does.
  bool sends_alike(const std::vector<Collective>& issued) const;
};

/// The library that sends what it is given, stalls on any disagreement and
/// lets a dead peer's partners wait: the engine's when given none.
const CollectiveLibrary& plain_library();

}  // namespace ddpsim::sim
