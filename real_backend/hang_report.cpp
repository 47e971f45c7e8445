#include "real_backend/hang_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ddpsim::real {
namespace {

using Phase = RankProgress::Phase;
using Kind = CollectiveLabel::Kind;

std::string ranks_text(const std::vector<int>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "));
}

std::string where(const RankProgress& p) {
  const auto n = static_cast<int>(p.history.size());
  const std::string last = n == 0 ? "before its first collective"
                                  : fmt::format("after collective #{} ({})", n - 1, describe(p.history.back()));
  switch (p.phase) {
    case Phase::kComputing:
      return fmt::format("is computing {}", last);
    case Phase::kInBarrier:
      return fmt::format("has left the training loop {} and waits in the end-of-training barrier", last);
    case Phase::kInCollective:
      return fmt::format("waits in collective #{} ({})", n - 1, describe(p.current));
    case Phase::kNoAnswer:
      break;
  }
  return "did not answer (dead, or stuck outside the transport)";
}

}  // namespace

std::vector<int> encode_progress(const RankProgress& p) {
  std::vector<int> w = {static_cast<int>(p.phase), static_cast<int>(p.current.kind), p.current.iteration, p.current.bucket};
  for (const CollectiveLabel& l : p.history) w.insert(w.end(), {static_cast<int>(l.kind), l.iteration, l.bucket});
  return w;
}

RankProgress decode_progress(const std::vector<int>& w, int rank) {
  if (w.size() < 4 || (w.size() - 4) % 3 != 0 || w[0] < 0 || w[0] > 3) throw std::runtime_error("malformed progress message");
  RankProgress p;
  p.rank = rank;
  p.phase = static_cast<Phase>(w[0]);
  p.current = {static_cast<Kind>(w[1]), w[2], w[3]};
  for (std::size_t i = 4; i < w.size(); i += 3) p.history.push_back({static_cast<Kind>(w[i]), w[i + 1], w[i + 2]});
  return p;
}

int reporting_rank(const std::vector<RankProgress>& progress) {
  for (const RankProgress& p : progress) {
    if (p.phase == Phase::kInCollective || p.phase == Phase::kInBarrier) return p.rank;
  }
  return progress.empty() ? 0 : progress.front().rank;
}

std::string hang_report(const std::vector<RankProgress>& progress, double timeout_s) {
  std::string out = fmt::format("watchdog: no progress for {:g} s; where every rank is:\n", timeout_s);
  // The collective that hangs: the oldest one a rank waits in.
  const RankProgress* oldest = nullptr;
  for (const RankProgress& p : progress) {
    if (p.phase == Phase::kInCollective && (!oldest || p.history.size() < oldest->history.size())) oldest = &p;
  }
  if (oldest) {
    const std::size_t seq = oldest->history.size() - 1;
    std::vector<int> waiting;
    for (const RankProgress& p : progress) {
      if (p.phase == Phase::kInCollective && p.history.size() == oldest->history.size()) waiting.push_back(p.rank);
    }
    out += fmt::format("  collective #{} ({}): {} entered it and wait\n", seq, describe(oldest->current), ranks_text(waiting));
    for (const RankProgress& p : progress) {
      if (std::find(waiting.begin(), waiting.end(), p.rank) == waiting.end()) {
        out += fmt::format("  missing from #{}: rank {} {}\n", seq, p.rank, where(p));
      }
    }
  } else {
    for (const RankProgress& p : progress) out += fmt::format("  rank {} {}\n", p.rank, where(p));
  }
  // Where the histories first diverge: the same sequence number, different work.
  std::size_t common = SIZE_MAX;
  for (const RankProgress& p : progress) {
    if (p.phase != Phase::kNoAnswer) common = std::min(common, p.history.size());
  }
  bool diverged = false;
  for (std::size_t s = 0; common != SIZE_MAX && s < common && !diverged; ++s) {
    std::map<std::tuple<int, int, int>, std::vector<int>> groups;  // label -> ranks
    for (const RankProgress& p : progress) {
      if (p.phase == Phase::kNoAnswer) continue;
      const CollectiveLabel& l = p.history[s];
      groups[{static_cast<int>(l.kind), l.iteration, l.bucket}].push_back(p.rank);
    }
    if (groups.size() < 2) continue;
    diverged = true;
    out += fmt::format("  first misaligned collective: #{}, paired by sequence number but doing different work:\n", s);
    // The culprit: the smaller group; between groups of one size (W = 2: one rank each), the one
    // ahead, a later iteration at the same sequence number: it skipped collectives to get there.
    const std::vector<int>* minority = nullptr;
    CollectiveLabel minority_label, majority_label;
    bool tie = false;
    for (const auto& [key, ranks] : groups) {
      const CollectiveLabel l{static_cast<Kind>(std::get<0>(key)), std::get<1>(key), std::get<2>(key)};
      out += fmt::format("    {} ran {}\n", ranks_text(ranks), describe(l));
      const bool smaller = minority && ranks.size() < minority->size();
      const bool same_size = minority && ranks.size() == minority->size();
      if (!minority || smaller || (same_size && l.iteration > minority_label.iteration)) {
        tie = same_size && l.iteration == minority_label.iteration;
        minority = &ranks;
        minority_label = l;
      } else if (same_size && l.iteration == minority_label.iteration) {
        tie = true;
      }
    }
    std::size_t majority_size = 0;  // the largest other group
    for (const auto& [key, ranks] : groups) {
      if (&ranks != minority && ranks.size() > majority_size) {
        majority_size = ranks.size();
        majority_label = {static_cast<Kind>(std::get<0>(key)), std::get<1>(key), std::get<2>(key)};
      }
    }
    if (minority_label.iteration > majority_label.iteration) {
      out += fmt::format("  culprit: {}: it skipped collectives of iteration {} (a skipped backward?), so its later "
                         "gradients were averaged with the others' earlier ones until the others waited for a "
                         "collective it never issued\n",
                         ranks_text(*minority), majority_label.iteration);
    } else if (tie) {
      out += "  culprit: not told apart by the histories: as many ranks did each kind of work in the same "
             "iteration; the first rank to issue a different collective is the one whose code path differs\n";
    } else {
      out += fmt::format("  culprit: {} issued a different collective than the others\n", ranks_text(*minority));
    }
  }
  if (!diverged && oldest) {
    out += "  the ranks' collective histories agree: a rank stopped issuing collectives (uneven inputs, an early exit, "
           "a crash) or is slow beyond the timeout\n";
  }
  out += "  fix: every rank must issue the same collectives in the same order. If a rank may skip a step, agree on "
         "it first (--symmetric-skip: a one-element all-reduce before backward); for uneven inputs use Join or a "
         "padded sampler; see docs/runbook.md\n";
  return out;
}

}  // namespace ddpsim::real
