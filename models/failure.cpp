#include "models/failure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "models/ddp_job.hpp"

namespace ddpsim::models {

std::string_view to_string(RankState state) {
  switch (state) {
    case RankState::kIssued: return "issued";
    case RankState::kCrashed: return "crashed";
    case RankState::kExited: return "exited";
    case RankState::kElsewhere: return "elsewhere";
  }
  return "?";
}
namespace {

// Join's shadow collectives stand for the real ones they pair with.
std::uint32_t paired_tag(std::uint32_t tag) {
  switch (static_cast<DdpTag>(tag)) {
    case DdpTag::kShadowAllReduce: return static_cast<std::uint32_t>(DdpTag::kAllReduce);
    case DdpTag::kShadowBroadcast: return static_cast<std::uint32_t>(DdpTag::kBufferBroadcast);
    default: return tag;
  }
}

bool same_label(const sim::OpLabel& a, const sim::OpLabel& b) {
  return paired_tag(a.tag) == paired_tag(b.tag) && a.iteration == b.iteration && a.index == b.index;
}

// The most common value among `items` (ties: the earliest item's), by `key`.
template <class T, class Key>
std::size_t majority(const std::vector<T>& items, Key key) {
  std::size_t best = 0;
  int best_count = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    int count = 0;
    for (const T& other : items) count += key(other) == key(items[i]);
    if (count > best_count) best = i, best_count = count;
  }
  return best;
}

std::string name_op(const sim::OpLabel& label, const OpNamer& name_of) { return name_of ? name_of(label) : op_name(label); }

std::string describe_op(const sim::OpLabel& label, const OpNamer& name_of) {
  if (static_cast<DdpTag>(label.tag) == DdpTag::kFinalBarrier) return "barrier after the loop";
  return fmt::format("{} of iteration {}", name_op(label, name_of), label.iteration);
}

std::string fix_for(const std::set<FaultType>& faults) {
  if (faults.count(FaultType::kSkipBackward) || faults.count(FaultType::kSkipIteration)) {
    return "make the skip decision collective: all-reduce a flag before backward and skip on every rank "
           "(scenarios/fix_symmetric_skip.yaml)";
  }
  if (faults.count(FaultType::kUnevenBatches)) {
    return "give every rank the same number of batches: DistributedSampler pads (drop_last=False) or truncates "
           "(drop_last=True); or run the loop inside torch.distributed.algorithms.Join";
  }
  if (faults.count(FaultType::kExtraCollective)) {
    return "run the metric's all-reduce on every rank and restrict only the logging to rank 0 "
           "(scenarios/fix_rank0_logging.yaml)";
  }
  if (faults.count(FaultType::kUnusedParameters)) {
    return "pass find_unused_parameters=True to DistributedDataParallel, or make every parameter take part in "
           "the loss on every rank";
  }
  if (faults.count(FaultType::kSkipUnit)) {
    return "call every FSDP unit's module on every rank in every micro-batch (a branch not taken can run on a zero "
           "input, or add its output times zero), so its all-gathers and reduce-scatter run everywhere; or leave the "
           "conditional module out of the wrap policy so its parameters travel with its parent's unit";
  }
  if (faults.count(FaultType::kMicroBatches)) {
    return "run the same number of micro-batches per optimizer step on every rank (size the accumulation window "
           "from a DistributedSampler's equal shares, and drop or pad the last window on every rank)";
  }
  if (faults.count(FaultType::kLinkDown)) {
    return "bring the host's link back (its NIC, cable, switch port); a lost host cannot be waited out: give "
           "init_process_group a timeout (gloo waits 30 minutes by default, NCCL's watchdog 10) so the job fails "
           "fast, and restart it without the host (torchrun --max-restarts with an elastic --nnodes range)";
  }
  if (faults.count(FaultType::kCrash)) {
    return "restart from the last checkpoint (torchrun --max-restarts); keep checkpoints frequent enough to bound "
           "the lost work";
  }
  return "compare each rank's collective sequence (TORCH_DISTRIBUTED_DEBUG=DETAIL, or the flight recorder)";
}

}  // namespace

void schedule_timed_faults(const std::vector<Fault>& faults, int rank, sim::Engine& engine, RankStatus& status) {
  for (const Fault& f : faults) {
    if (!f.has_rank(rank)) continue;
    if (const auto* crash = f.as<fault::Crash>(); crash && crash->at) {
      status.faults.insert(FaultType::kCrash);
      engine.schedule_crash(rank, *crash->at, fmt::format("killed at {:.3f} ms (fault: crash)", crash->at->ms()));
    }
    if (const auto* down = f.as<fault::LinkDown>()) {
      status.faults.insert(FaultType::kLinkDown);
      status.link_down = fmt::format("at {:.3f} ms (fault: link_down)", down->at.ms());
      engine.schedule_link_down(rank, down->at);
    }
  }
}

std::vector<MisalignedPair> misaligned_pairs(const sim::RunSummary& summary, const OpNamer& name_of) {
  std::vector<MisalignedPair> out;
  for (const sim::Misalignment& m : summary.misalignments) {
    const std::size_t ref =
        majority(m.labels, [](const sim::OpLabel& l) { return std::make_tuple(paired_tag(l.tag), l.iteration, l.index); });
    for (std::size_t p = 0; p < m.labels.size(); ++p) {
      if (same_label(m.labels[p], m.labels[ref])) continue;
      out.push_back(MisalignedPair{m.seq, m.ranks[p], name_op(m.labels[p], name_of), static_cast<int>(m.labels[p].iteration),
                                   m.ranks[ref], name_op(m.labels[ref], name_of), static_cast<int>(m.labels[ref].iteration)});
    }
  }
  return out;
}

namespace {

// The ranks at the earliest collective that did not complete (world group).
struct OpenSides {
  const sim::OpenCollective* open = nullptr;
  int odd_one = -1;                 ///< the first rank outside the majority there
  std::vector<int> majority_ranks;  ///< issued the most common (op, bytes) there, crashed or not
};

RankAtFailure rank_at(const sim::MemberState& m, const std::vector<RankStatus>& ranks,
                      const std::map<int, const sim::Crash*>& crashed, const FailureContext& context) {
  RankAtFailure r;
  r.rank = m.rank;
  const auto c = crashed.find(m.rank);
  if (m.arrived) {
    r.state = RankState::kIssued;
    r.op = describe_op(m.label, context.name_of);
    r.collective = std::string(sim::to_string(m.collective.kind));
    r.bytes = m.collective.bytes;
    r.iteration = static_cast<int>(m.label.iteration);
    if (static_cast<DdpTag>(m.label.tag) == DdpTag::kAllReduce) r.bucket = static_cast<int>(m.label.index);
    if (context.dtype_of) r.dtype = context.dtype_of(m.label);
  }
  if (c != crashed.end()) {
    r.state = RankState::kCrashed;
    r.detail = c->second->message;
  } else if (!m.arrived) {
    const RankStatus& s = ranks[static_cast<std::size_t>(m.rank)];
    r.state = s.finished ? RankState::kExited : RankState::kElsewhere;
    r.detail = s.finished ? fmt::format("left its loop after {} iterations and exited", s.iterations_run)
                          : "has not reached this collective";
  }
  return r;
}

// Each member's side of the earliest open collective, who waits and who is missing.
OpenSides describe_open(const sim::RunSummary& summary, const std::vector<RankStatus>& ranks,
                        const std::map<int, const sim::Crash*>& crashed, const FailureContext& context, FailureReport& f) {
  OpenSides out;
  for (const sim::OpenCollective& oc : summary.open) {
    if (oc.group == sim::Engine::kWorld && (out.open == nullptr || oc.seq < out.open->seq)) out.open = &oc;
  }
  if (out.open == nullptr) return out;
  f.sequence = out.open->seq;
  std::vector<const sim::MemberState*> arrived;
  for (const sim::MemberState& m : out.open->members) {
    f.ranks.push_back(rank_at(m, ranks, crashed, context));
    if (m.arrived) arrived.push_back(&m);
  }
  if (!arrived.empty()) {
    const std::size_t ref = majority(arrived, [](const sim::MemberState* m) {
      return std::make_pair(m->collective.kind, m->collective.bytes);
    });
    for (const sim::MemberState* m : arrived) {
      if (m->collective.kind == arrived[ref]->collective.kind && m->collective.bytes == arrived[ref]->collective.bytes) {
        out.majority_ranks.push_back(m->rank);
        if (!crashed.count(m->rank)) f.waiting_ranks.push_back(m->rank);
      }
    }
  }
  for (const sim::MemberState& m : out.open->members) {
    if (std::find(f.waiting_ranks.begin(), f.waiting_ranks.end(), m.rank) == f.waiting_ranks.end()) {
      f.missing_ranks.push_back(m.rank);
    }
    if (out.odd_one < 0 && std::find(out.majority_ranks.begin(), out.majority_ranks.end(), m.rank) == out.majority_ranks.end()) {
      out.odd_one = m.rank;
    }
  }
  return out;
}

// The culprit at the open collective: the odd one out, else the first missing rank.
void blame_at_open(const OpenSides& sides, FailureReport& f) {
  const int r = sides.odd_one >= 0 ? sides.odd_one : f.missing_ranks.front();
  f.culprit_rank = r;
  const RankAtFailure& at = *std::find_if(f.ranks.begin(), f.ranks.end(), [&](const RankAtFailure& x) { return x.rank == r; });
  const RankAtFailure* other = nullptr;
  for (const RankAtFailure& x : f.ranks) {
    if (!sides.majority_ranks.empty() && x.rank == sides.majority_ranks.front() && x.rank != r) other = &x;
  }
  const std::string others = other ? fmt::format("the others issued {} ({} bytes)", other->op, other->bytes) : "";
  if (at.state == RankState::kIssued) {
    f.reason = fmt::format("collective_seq_id {}: rank {} issued {} ({} {} bytes){}{}", *f.sequence + 1, r, at.op, at.collective,
                           at.bytes, others.empty() ? "" : " where ", others);
  } else {
    f.reason = fmt::format("collective_seq_id {}: rank {} {}{}{}", *f.sequence + 1, r,
                           at.state == RankState::kCrashed ? "crashed: " + at.detail : at.detail, others.empty() ? "" : "; ",
                           others);
  }
}

// The first member of the open collective whose link went down, or -1.
int cut_off_member(const OpenSides& sides, const std::vector<RankStatus>& ranks) {
  if (sides.open == nullptr) return -1;
  for (const sim::MemberState& m : sides.open->members) {
    if (!ranks[static_cast<std::size_t>(m.rank)].link_down.empty()) return m.rank;
  }
  return -1;
}

// The culprit: the rank whose collective sequence diverged first.
void blame(const sim::RunSummary& summary, const OpenSides& sides, const std::vector<RankStatus>& ranks,
           const OpNamer& name_of, FailureReport& f) {
  const std::vector<MisalignedPair> pairs = misaligned_pairs(summary, name_of);
  if (!pairs.empty()) {
    const MisalignedPair& p = pairs.front();
    f.culprit_rank = p.rank;
    f.reason = fmt::format(
        "collective_seq_id {}: rank {} ran {} of iteration {} where rank {} ran {} of iteration {}: rank {}'s collective "
        "sequence is shifted (it skipped or added collectives before collective_seq_id {}), and the ranks then disagree "
        "about how many collectives remain",
        p.sequence + 1, p.rank, p.op, p.iteration, p.with_rank, p.with_op, p.with_iteration, p.rank, p.sequence + 1);
  } else if (sides.open != nullptr && (sides.odd_one >= 0 || !f.missing_ranks.empty())) {
    blame_at_open(sides, f);
  } else if (const int cut = cut_off_member(sides, ranks); cut >= 0) {
    f.culprit_rank = cut;
    f.reason = fmt::format("collective_seq_id {}: every member issued it, but rank {}'s network link went down {}: "
                           "its data can neither leave nor reach it, and every member waits in it",
                           sides.open->seq + 1, cut, ranks[static_cast<std::size_t>(cut)].link_down);
  } else if (!summary.crashes.empty()) {
    f.culprit_rank = summary.crashes.front().rank;
    f.reason = fmt::format("rank {} crashed: {}", f.culprit_rank, summary.crashes.front().message);
  }
}

// The earliest sign: a process exiting with an error (the launcher sees it at once), else the watchdog.
void when_noticed(const sim::RunSummary& summary, const FailureContext& context, FailureReport& f) {
  if (!summary.crashes.empty() && (!summary.watchdog_at || summary.crashes.front().at <= *summary.watchdog_at)) {
    f.detected_at_ms = summary.crashes.front().at.ms();
    f.detection = "the error itself: the process raised and exited";
  } else if (summary.watchdog_at) {
    f.detected_at_ms = summary.watchdog_at->ms();
    f.detection = fmt::format("{} watchdog: a rank waited {:g} s in collective_seq_id {}",
                              context.backend == Backend::kNccl ? "NCCL" : "gloo", context.watchdog.ms() / 1000,
                              summary.watchdog_collective ? summary.watchdog_collective->second + 1 : 0);
  } else {
    f.detection = "never: with no watchdog the job waits forever";
  }
}

}  // namespace

std::optional<FailureReport> analyse_failure(const sim::RunSummary& summary, const std::vector<RankStatus>& ranks,
                                             const FailureContext& context) {
  const bool everyone_finished =
      std::all_of(ranks.begin(), ranks.end(), [](const RankStatus& r) { return r.finished; });
  if (everyone_finished && summary.crashes.empty() && !summary.watchdog_at) return std::nullopt;
  FailureReport f;
  std::map<int, const sim::Crash*> crashed;
  for (const sim::Crash& c : summary.crashes) crashed.emplace(c.rank, &c);
  const OpenSides sides = describe_open(summary, ranks, crashed, context, f);
  blame(summary, sides, ranks, context.name_of, f);
  if (f.culprit_rank >= 0) f.fix = fix_for(ranks[static_cast<std::size_t>(f.culprit_rank)].faults);
  when_noticed(summary, context, f);
  return f;
}

}  // namespace ddpsim::models
