#include "validate/explain.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <set>

namespace ddpsim::validate {
namespace {

using formats::FlightRecord;
using formats::FrEntry;

// One group's collectives: rank -> seq -> entry.
using Table = std::map<int, std::map<std::int64_t, const FrEntry*>>;

// A recorder that keeps no state (gloo's in PyTorch 2.x: every entry stays
// "scheduled"): the rank passed every entry but its last, where it stopped.
bool stateless(const FlightRecord& d) {
  return !d.entries.empty() &&
         std::all_of(d.entries.begin(), d.entries.end(), [](const FrEntry& x) { return x.state == "scheduled"; });
}

std::string frame_text(const FrEntry& e) {
  if (e.frames.empty()) return "";
  const formats::FrFrame& f = e.frames.front();
  return f.filename.empty() || f.line == 0 ? f.name : fmt::format("{} ({}:{})", f.name, f.filename, f.line);
}

std::string shape_text(const std::vector<std::vector<std::int64_t>>& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out += i ? ", [" : "[";
    for (std::size_t d = 0; d < sizes[i].size(); ++d) out += (d ? ", " : "") + std::to_string(sizes[i][d]);
    out += "]";
  }
  return out + "]";
}

std::string list(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

Side side_of(int rank, const FrEntry& e) { return {rank, e.profiling_name, e.input_sizes, e.state}; }

bool same_op(const FrEntry& a, const FrEntry& b) {
  return a.profiling_name == b.profiling_name && a.input_sizes == b.input_sizes;
}

// The members of group `pg` as the dumps declare them, else the ranks that dumped.
std::vector<int> members_of(const std::vector<FlightRecord>& dumps, const std::string& pg) {
  for (const FlightRecord& d : dumps) {
    for (const formats::FrGroup& g : d.groups) {
      if (g.id == pg) return g.ranks;
    }
  }
  std::vector<int> out;
  for (const FlightRecord& d : dumps) out.push_back(d.rank);
  return out;
}

// Between two ranks that disagree at `s` and are as many on each side: the
// one whose next collective is the other's at `s` added one (it is ahead);
// the one whose collective at `s` is the other's next skipped one.
int shifted_rank(const Table& t, std::int64_t s, int a, int b) {
  const auto at = [&](int r, std::int64_t q) -> const FrEntry* {
    const auto row = t.find(r);
    if (row == t.end()) return nullptr;
    const auto it = row->second.find(q);
    return it == row->second.end() ? nullptr : it->second;
  };
  const FrEntry* a_next = at(a, s + 1);
  const FrEntry* b_next = at(b, s + 1);
  if (a_next && same_op(*a_next, *at(b, s))) return a;  // a issued an extra collective at s
  if (b_next && same_op(*b_next, *at(a, s))) return b;
  return std::max(a, b);
}

// The first sequence number where two recorded sides differ; the culprit is
// the side fewer ranks share (on a tie, the one whose sequence is shifted).
void find_mismatch(const Table& t, Explanation& e) {
  std::set<std::int64_t> seqs;
  for (const auto& [r, by_seq] : t) {
    for (const auto& [s, entry] : by_seq) seqs.insert(s);
  }
  for (std::int64_t s : seqs) {
    std::vector<std::pair<int, const FrEntry*>> at;
    for (const auto& [r, by_seq] : t) {
      if (auto it = by_seq.find(s); it != by_seq.end()) at.emplace_back(r, it->second);
    }
    for (std::size_t i = 1; i < at.size(); ++i) {
      if (same_op(*at[0].second, *at[i].second)) continue;
      const auto count = [&](const FrEntry& x) {
        return std::count_if(at.begin(), at.end(), [&](const auto& p) { return same_op(*p.second, x); });
      };
      const auto n0 = count(*at[0].second), ni = count(*at[i].second);
      e.mismatch_seq = s;
      e.mismatch = {side_of(at[0].first, *at[0].second), side_of(at[i].first, *at[i].second)};
      e.culprit = n0 < ni ? at[0].first : ni < n0 ? at[i].first : shifted_rank(t, s, at[0].first, at[i].first);
      return;
    }
  }
}

// Before the first mismatch: the first collective where every rank ran the same op and size but
// the recorded stacks differ (silent_seq); failing that, the stretch of identical collectives just
// before the mismatch, where a shift hides (shift_range).
void find_silent(const Table& t, Explanation& e) {
  if (!e.mismatch_seq) return;
  std::int64_t stretch_start = 0;  // 0: none (PyTorch counts from 1)
  for (std::int64_t s = 1; s < *e.mismatch_seq; ++s) {
    std::vector<std::pair<int, const FrEntry*>> at;
    for (const auto& [r, by_seq] : t) {
      if (auto it = by_seq.find(s); it != by_seq.end()) at.emplace_back(r, it->second);
    }
    if (at.size() < 2) continue;
    const bool same = std::all_of(at.begin(), at.end(), [&](const auto& p) { return same_op(*p.second, *at[0].second); });
    if (!same) {
      stretch_start = 0;
      continue;
    }
    for (std::size_t i = 1; i < at.size(); ++i) {
      if (at[0].second->frames.empty() || at[i].second->frames.empty()) continue;
      if (at[0].second->frames == at[i].second->frames) continue;
      e.silent_seq = s;
      e.silent = {{at[0].first, frame_text(*at[0].second)}, {at[i].first, frame_text(*at[i].second)}};
      return;
    }
    const FrEntry* before = nullptr;
    if (s > 1) {
      const auto row = t.find(at[0].first);
      if (auto it = row->second.find(s - 1); it != row->second.end()) before = it->second;
    }
    if (stretch_start == 0 || before == nullptr || !same_op(*before, *at[0].second)) stretch_start = s;
  }
  // A culprit whose next collective is the others' at the mismatch added one there: nothing hides
  // before it. Otherwise it skipped one, somewhere in the stretch.
  const auto row = t.find(e.culprit);
  const FrEntry* next = nullptr;
  const FrEntry* theirs = nullptr;
  if (row != t.end()) {
    if (auto it = row->second.find(*e.mismatch_seq + 1); it != row->second.end()) next = it->second;
  }
  for (const Side& side : e.mismatch) {
    if (side.rank == e.culprit) continue;
    theirs = t.at(side.rank).at(*e.mismatch_seq);
  }
  const bool added = next != nullptr && theirs != nullptr && same_op(*next, *theirs);
  if (stretch_start > 0 && !added) e.shift_range = {{stretch_start, *e.mismatch_seq - 1}};
}

// Explains group `pg` if one of its collectives did not complete everywhere.
bool explain_group(const std::vector<FlightRecord>& dumps, const std::string& pg, Explanation& e) {
  Table t;
  std::set<int> dumped, no_state;
  for (const FlightRecord& d : dumps) {
    dumped.insert(d.rank);
    if (stateless(d)) no_state.insert(d.rank);
    for (const FrEntry& x : d.entries) {
      if (x.pg_id == pg && !x.is_p2p) t[d.rank][x.collective_seq_id] = &x;
    }
  }
  const auto done = [&](int r, std::int64_t s, const FrEntry& x) {
    if (!no_state.count(r)) return x.state == "completed";
    return s < t.at(r).rbegin()->first;  // stateless: every entry but the last was passed
  };
  const std::vector<int> members = members_of(dumps, pg);
  std::optional<std::int64_t> stuck;
  for (const auto& [r, by_seq] : t) {
    for (const auto& [s, x] : by_seq) {
      if (!done(r, s, *x) && (!stuck || s < *stuck)) stuck = s;
    }
  }
  if (!stuck) return false;
  e.stuck = true;
  e.pg_id = pg;
  e.collective_seq_id = *stuck;
  e.stateless.assign(no_state.begin(), no_state.end());
  std::vector<std::pair<int, const FrEntry*>> issued;
  for (int m : members) {
    if (!dumped.count(m)) {
      e.no_dump.push_back(m);
      continue;
    }
    const auto row = t.find(m);
    const FrEntry* x = nullptr;
    if (row != t.end()) {
      if (auto it = row->second.find(*stuck); it != row->second.end()) x = it->second;
    }
    if (x == nullptr) {
      e.missing.push_back(m);
      continue;
    }
    if (e.pg_desc.empty()) e.pg_desc = x->pg_desc;
    e.sides.push_back(side_of(m, *x));
    issued.emplace_back(m, x);
  }
  // Waiting: the members that issued the op most of them issued there and did not pass it; the
  // others issued another op in its place: missing from it, as ddpsim run says. Without a majority
  // (a tie), every member that issued something waits in it.
  const FrEntry* common = nullptr;
  long most = 0;
  bool tie = false;
  for (const auto& side : issued) {
    const FrEntry* x = side.second;  // not a structured binding: clang 14 cannot capture one
    const long n = std::count_if(issued.begin(), issued.end(), [x](const auto& p) { return same_op(*p.second, *x); });
    if (n > most) {
      most = n, common = x, tie = false;
    } else if (n == most && !same_op(*x, *common)) {
      tie = true;
    }
  }
  for (const auto& [m, x] : issued) {
    if (!tie && !same_op(*x, *common)) {
      e.missing.push_back(m);
    } else if (!done(m, *stuck, *x)) {
      e.waiting.push_back(m);
    }
  }
  std::sort(e.missing.begin(), e.missing.end());
  find_mismatch(t, e);
  find_silent(t, e);
  return true;
}

void decide(Explanation& e) {
  const std::string what = e.sides.empty() ? "the collective"
                                           : fmt::format("{} of {}", e.sides.front().profiling_name,
                                                         shape_text(e.sides.front().input_sizes));
  if (e.mismatch_seq && *e.mismatch_seq <= e.collective_seq_id) {
    if (e.silent_seq) {
      const auto& a = e.silent[0].first == e.culprit ? e.silent[0] : e.silent[1];
      const auto& b = e.silent[0].first == e.culprit ? e.silent[1] : e.silent[0];
      e.reason = fmt::format("collective_seq_id {}: rank {} ran {} where rank {} ran {}: the same op and size, so it "
                             "completed, silently misaligned; the ranks disagree from collective_seq_id {} on",
                             *e.silent_seq, a.first, a.second, b.first, b.second, *e.mismatch_seq);
    } else {
      const Side& a = e.mismatch[0];
      const Side& b = e.mismatch[1];
      e.reason = fmt::format("collective_seq_id {}: rank {} ran {} of {} where rank {} ran {} of {}: rank {}'s "
                             "collective sequence differs from the others' from there on",
                             *e.mismatch_seq, a.rank, a.profiling_name, shape_text(a.input_sizes), b.rank,
                             b.profiling_name, shape_text(b.input_sizes), e.culprit);
    }
    const std::int64_t from = e.silent_seq ? *e.silent_seq : e.shift_range ? e.shift_range->first : *e.mismatch_seq;
    e.fix = fmt::format("make rank {} issue the same collectives, in the same order and sizes, as the others up to "
                        "collective_seq_id {}: a collective on some ranks only (logging a metric on rank 0, a skipped "
                        "backward or FSDP unit, an extra batch) shifts every later one",
                        e.culprit, from);
    return;
  }
  if (!e.missing.empty()) {
    e.culprit = e.missing.front();
    e.reason = fmt::format("collective_seq_id {} ({}): {} waiting, {} never issued it", e.collective_seq_id, what,
                           list(e.waiting), list(e.missing));
    e.fix = fmt::format("find why {} stopped before collective_seq_id {}: a rank that leaves the loop early (uneven "
                        "inputs: use Join or drop_last), skips a backward or a collective, or blocks on something "
                        "else; every rank must issue every collective",
                        list(e.missing), e.collective_seq_id);
    return;
  }
  if (!e.no_dump.empty()) {
    e.culprit = e.no_dump.front();
    e.reason = fmt::format("collective_seq_id {} ({}): {} waiting; {} left no dump", e.collective_seq_id, what,
                           list(e.waiting), list(e.no_dump));
    e.fix = fmt::format("{} left no dump: its process likely died (read its log for the error); restart from the "
                        "last checkpoint, and see why it died",
                        list(e.no_dump));
    return;
  }
  e.reason = fmt::format("collective_seq_id {} ({}): every member issued it and none completed it", e.collective_seq_id,
                         what);
  e.fix = "every member waits in the same collective: the network or a GPU stalled; check NCCL's logs (NCCL_DEBUG=INFO)";
}

}  // namespace

Explanation explain(const std::vector<FlightRecord>& dumps) {
  std::set<std::string> groups;
  for (const FlightRecord& d : dumps) {
    for (const FrEntry& x : d.entries) groups.insert(x.pg_id);
  }
  std::vector<std::string> order(groups.begin(), groups.end());
  std::stable_partition(order.begin(), order.end(), [](const std::string& g) { return g == "0"; });
  Explanation e;
  for (const std::string& g : order) {
    if (explain_group(dumps, g, e)) break;
  }
  if (e.stuck) decide(e);
  return e;
}

void write_explanation(std::ostream& out, const Explanation& e) {
  if (!e.stuck) {
    fmt::print(out, "every recorded collective completed on every rank that dumped: no hang in these dumps\n");
    return;
  }
  fmt::print(out, "process group {} ({}), collective_seq_id {}:\n", e.pg_id, e.pg_desc.empty() ? "?" : e.pg_desc,
             e.collective_seq_id);
  std::vector<std::pair<std::string, std::vector<int>>> groups;  // ranks that recorded the same, together
  for (const Side& s : e.sides) {
    const std::string what = fmt::format("{} {} of {}", s.state, s.profiling_name, shape_text(s.input_sizes));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
    if (it == groups.end()) it = groups.insert(groups.end(), {what, {}});
    it->second.push_back(s.rank);
  }
  for (const auto& [what, ranks] : groups) fmt::print(out, "    {} {}\n", list(ranks), what);
  fmt::print(out, "  waiting: {}; missing: {}{}\n", list(e.waiting), list(e.missing),
             e.no_dump.empty() ? "" : fmt::format("; no dump: {}", list(e.no_dump)));
  if (!e.stateless.empty()) {
    fmt::print(out, "  ({} recorded no state, as gloo's recorder: the last entry taken as where it stopped)\n",
               list(e.stateless));
  }
  if (e.mismatch_seq) {
    fmt::print(out, "  first mismatch: collective_seq_id {}: rank {} {} of {}, rank {} {} of {}\n", *e.mismatch_seq,
               e.mismatch[0].rank, e.mismatch[0].profiling_name, shape_text(e.mismatch[0].input_sizes),
               e.mismatch[1].rank, e.mismatch[1].profiling_name, shape_text(e.mismatch[1].input_sizes));
  }
  if (e.silent_seq) {
    fmt::print(out, "  first silent misalignment: collective_seq_id {}: the same op and size, rank {} at {}, rank {} at {}\n",
               *e.silent_seq, e.silent[0].first, e.silent[0].second, e.silent[1].first, e.silent[1].second);
  } else if (e.shift_range) {
    const auto [from, to] = *e.shift_range;
    fmt::print(out, "  silent misalignment: rank {} skipped a collective in {}, where every rank ran the same op and "
               "size (the dumps' stacks do not tell those collectives apart)\n",
               e.culprit, from == to ? fmt::format("collective_seq_id {}", from)
                                     : fmt::format("collective_seq_id {} to {}", from, to));
  }
  if (e.culprit >= 0) fmt::print(out, "  culprit: rank {}: {}\n", e.culprit, e.reason);
  fmt::print(out, "  fix: {}\n", e.fix);
}

}  // namespace ddpsim::validate
