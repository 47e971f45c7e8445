#include "sim/levelized.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddpsim::sim {

namespace {

// Per-rank arrays of end times, kept only while a later op or step reads
// them, and reused once it has.
class EndTimes {
 public:
  EndTimes(const UniformProgram& p, std::size_t ranks)
      : ranks_(ranks), kept_(p.ops.size()), last_use_(p.ops.size(), -1), release_at_(p.ops.size()) {
    std::size_t begin = 0;
    for (const ProgramStep& s : p.steps) {
      for (std::size_t j = begin; j < s.end; ++j) {
        if (p.ops[j].after >= 0) need(p.ops[j].after, static_cast<std::int64_t>(j));
      }
      // Read into the step's issue times before its first op (an empty step reads nothing).
      if (s.issued_after >= 0 && s.end > begin) need(s.issued_after, static_cast<std::int64_t>(begin));
      begin = s.end;
    }
    for (std::size_t i = 0; i < last_use_.size(); ++i) {
      if (last_use_[i] >= 0) release_at_[static_cast<std::size_t>(last_use_[i])].push_back(i);
    }
  }
  // Where op j's ends go, or null if nothing reads them.
  Time* open(std::size_t j) {
    if (last_use_[j] < 0) return nullptr;
    if (spare_.empty()) {
      kept_[j].resize(ranks_);
    } else {
      kept_[j] = std::move(spare_.back());
      spare_.pop_back();
    }
    return kept_[j].data();
  }
  const Time* of(std::int32_t j) const { return kept_[static_cast<std::size_t>(j)].data(); }
  // Op j has been evaluated: frees what no op after it reads.
  void done(std::size_t j) {
    for (std::size_t i : release_at_[j]) spare_.push_back(std::move(kept_[i]));
  }

 private:
  void need(std::int32_t op, std::int64_t by) {
    auto& u = last_use_[static_cast<std::size_t>(op)];
    u = std::max(u, by);
  }
  std::size_t ranks_;
  std::vector<std::vector<Time>> kept_;
  std::vector<std::int64_t> last_use_;  // the last op that reads op i's ends; -1: none
  std::vector<std::vector<std::size_t>> release_at_;  // by op: the ops whose ends it reads last
  std::vector<std::vector<Time>> spare_;
};

}  // namespace

OpRef Recorder::enqueue(int, StreamKind stream, Time duration, OpLabel label, std::optional<OpRef> after) {
  ProgramOp& op = add(stream, label, after);
  op.duration = duration;
  op.per_rank = per_rank_next_;
  per_rank_next_ = false;
  return ref();
}

OpRef Recorder::enqueue_collective(int, GroupId group, Collective collective, OpLabel label, std::optional<OpRef> after) {
  if (group != kWorldGroup) throw std::invalid_argument("levelized evaluation: a collective over a group other than the world");
  ProgramOp& op = add(StreamKind::kComm, label, after);
  op.is_collective = true;
  op.collective = collective;
  return ref();
}

Time Recorder::per_rank(Time) {
  per_rank_next_ = true;
  return {};
}

void Recorder::end_step(std::int32_t issued_after, std::int32_t waits_for) {
  program_.steps.push_back({program_.ops.size(), issued_after, waits_for});
}

ProgramOp& Recorder::add(StreamKind stream, OpLabel label, const std::optional<OpRef>& after) {
  ProgramOp& op = program_.ops.emplace_back();
  op.stream = stream;
  op.label = label;
  op.after = after ? static_cast<std::int32_t>(after->index) : -1;
  return op;
}

OpRef Recorder::ref() const { return {static_cast<std::uint32_t>(program_.ops.back().stream), program_.ops.size() - 1}; }

namespace {

// Each op's index on its stream and each collective's sequence number; the
// program checked to be well formed on the way.
struct Indices {
  std::vector<std::uint64_t> stream_index, seq;
};

Indices index_program(const UniformProgram& program, const LevelizedOptions& options) {
  const std::vector<ProgramOp>& ops = program.ops;
  if (!program.steps.empty() && program.steps.back().end != ops.size()) {
    throw std::invalid_argument("levelized program: the steps do not cover the ops");
  }
  Indices out{std::vector<std::uint64_t>(ops.size()), std::vector<std::uint64_t>(ops.size())};
  std::uint64_t issued[kStreamsPerRank] = {};
  std::uint64_t collectives = 0;
  std::size_t begin = 0;
  for (const ProgramStep& st : program.steps) {
    const auto b = static_cast<std::int32_t>(begin), e = static_cast<std::int32_t>(st.end);
    if (st.end < begin || st.issued_after >= b || (st.waits_for >= 0 && (st.waits_for < b || st.waits_for >= e))) {
      throw std::invalid_argument("levelized program: a step is issued after a later op, or waits outside itself");
    }
    begin = st.end;
  }
  for (std::size_t j = 0; j < ops.size(); ++j) {
    if (ops[j].after >= static_cast<std::int32_t>(j)) throw std::invalid_argument("levelized program: an op depends on a later one");
    if (ops[j].per_rank && !options.extra) throw std::invalid_argument("levelized program: a per-rank op without LevelizedOptions::extra");
    out.stream_index[j] = issued[static_cast<int>(ops[j].stream)]++;
    if (ops[j].is_collective) out.seq[j] = collectives++;
  }
  return out;
}

// One op across every rank: what it reads and writes.
struct OpPass {
  const ProgramOp& op;
  std::size_t ranks;
  const Time* issue;  ///< the step's issue time per rank
  Time* tail;         ///< the op's stream: its previous end per rank (updated)
  const Time* dep;    ///< the dependency's end per rank, or null
  Time* kept;         ///< where the op's ends go, or null
  OpRecord& rec;      ///< the record, its rank-independent fields set
  StreamKind after_kind;
};

// A local op: each rank starts once issued, its stream free and its dependency done. Returns the latest end.
Time local_pass(const OpPass& p, const LevelizedOptions& options, Observer& observer) {
  Time latest;
  for (std::size_t r = 0; r < p.ranks; ++r) {
    const Time rd = max(p.issue[r], p.tail[r]);
    const Time start = p.dep != nullptr ? max(rd, p.dep[r]) : rd;
    const Time d = p.op.per_rank ? p.op.duration + options.extra(static_cast<int>(r), p.op) : p.op.duration;
    if (d < Time::zero()) throw std::invalid_argument("operation duration is negative");
    const Time end = start + d;
    p.rec.rank = static_cast<int>(r);
    p.rec.ready = rd;
    p.rec.start = start;
    p.rec.end = end;
    if (p.rec.after) p.rec.after->stream = Engine::stream_id(static_cast<int>(r), p.after_kind);
    observer.on_op(p.rec);
    p.tail[r] = end;
    if (p.kept != nullptr) p.kept[r] = end;
    latest = max(latest, end);
  }
  return latest;
}

// A collective: every member's arrival, then it runs from the last for `duration` (per ready, arrival:
// scratch arrays). Returns its end, or nullopt when its members arrive further apart than the watchdog allows.
template <class DurationOf>
std::optional<Time> collective_pass(const OpPass& p, Time* ready, Time* arrival, Time timeout, const DurationOf& duration_of,
                                    Observer& observer) {
  Time first = Time::max(), start;
  for (std::size_t r = 0; r < p.ranks; ++r) {
    ready[r] = max(p.issue[r], p.tail[r]);
    arrival[r] = p.dep != nullptr ? max(ready[r], p.dep[r]) : ready[r];
    first = min(first, arrival[r]);
    start = max(start, arrival[r]);
  }
  if (timeout > Time::zero() && first + timeout < start) return std::nullopt;
  const Time end = start + duration_of();
  p.rec.start = start;
  p.rec.end = end;
  for (std::size_t r = 0; r < p.ranks; ++r) {
    p.rec.rank = static_cast<int>(r);
    p.rec.ready = ready[r];
    p.rec.arrival = arrival[r];
    if (p.rec.after) p.rec.after->stream = Engine::stream_id(static_cast<int>(r), p.after_kind);
    observer.on_op(p.rec);
    p.tail[r] = end;
    if (p.kept != nullptr) p.kept[r] = end;
  }
  return end;
}

}  // namespace

std::optional<LevelizedRun> run_levelized(const UniformProgram& program, int world_size, const CollectiveCostFn& cost,
                                          const LevelizedOptions& options, Observer& observer) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  const auto w = static_cast<std::size_t>(world_size);
  const std::vector<ProgramOp>& ops = program.ops;
  const CollectiveLibrary& library = options.library != nullptr ? *options.library : plain_library();
  const std::optional<Collective> check = library.check_before(world_size);
  const Indices index = index_program(program, options);
  LevelizedRun out;
  out.step_end.assign(program.steps.size(), Time{});
  std::vector<Time> tail[kStreamsPerRank];
  for (auto& t : tail) t.assign(w, Time{});
  std::vector<Time> issue(w), ready(w), arrival(w);
  EndTimes ends(program, w);
  Time last;
  std::size_t j = 0;
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    const ProgramStep& step = program.steps[s];
    if (step.end == j) continue;  // nothing issued
    if (step.issued_after >= 0) {
      const Time* from = ends.of(step.issued_after);
      std::copy(from, from + w, issue.begin());
    } else {
      std::fill(issue.begin(), issue.end(), Time{});
    }
    for (; j < step.end; ++j) {
      const ProgramOp& op = ops[j];
      OpRecord rec;
      rec.stream = op.stream;
      rec.label = op.label;
      rec.is_collective = op.is_collective;
      if (op.after >= 0) rec.after = OpRef{0, index.stream_index[static_cast<std::size_t>(op.after)]};
      const OpPass pass{op, w, issue.data(), tail[static_cast<int>(op.stream)].data(),
                        op.after >= 0 ? ends.of(op.after) : nullptr, ends.open(j), rec,
                        op.after >= 0 ? ops[static_cast<std::size_t>(op.after)].stream : StreamKind::kHost};
      Time latest;
      if (!op.is_collective) {
        latest = local_pass(pass, options, observer);
      } else {
        rec.collective = op.collective;
        rec.group_seq = index.seq[j];
        const auto duration_of = [&] {
          Time d = cost(library.as_sent(op.collective), world_size);
          if (check) d += cost(*check, world_size);
          if (d < Time::zero()) throw std::logic_error("collective cost model returned a negative time");
          return d;
        };
        const std::optional<Time> end =
            collective_pass(pass, ready.data(), arrival.data(), options.watchdog_timeout, duration_of, observer);
        if (!end) return std::nullopt;
        latest = *end;
      }
      if (static_cast<std::int32_t>(j) == step.waits_for) out.step_end[s] = latest;
      last = max(last, latest);
      ends.done(j);
    }
  }
  out.summary.end = last;
  out.summary.rank_ops = static_cast<std::uint64_t>(ops.size()) * w;
  out.summary.events = out.summary.rank_ops;
  return out;
}

}  // namespace ddpsim::sim
