#include "sim/levelized.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

using namespace ddpsim::sim;

namespace {

struct Records final : Observer {
  std::vector<OpRecord> ops;
  void on_op(const OpRecord& r) override { ops.push_back(r); }
  // Each rank's records in its order of issue, ranks in order: what the
  // two ways of running a program can be compared by.
  std::vector<OpRecord> by_rank() const {
    std::vector<OpRecord> out = ops;
    std::stable_sort(out.begin(), out.end(), [](const OpRecord& a, const OpRecord& b) {
      return std::tie(a.rank, a.label.index) < std::tie(b.rank, b.label.index);
    });
    return out;
  }
};

// A rank's program on the engine: each step enqueued when its
// `issued_after` op ends (or at the start), as a process would.
class Replay final : public Process {
 public:
  Replay(const UniformProgram& p, int rank, const LevelizedOptions& o) : program_(p), rank_(rank), options_(o) {}
  void start(Engine& e) {
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      if (program_.steps[s].issued_after < 0) issue(e, s);
    }
  }
  void on_wake(Engine& e, std::uint64_t op) override {
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      if (program_.steps[s].issued_after == static_cast<std::int32_t>(op)) issue(e, s);
    }
  }

 private:
  void issue(Engine& e, std::size_t s) {
    const std::size_t begin = s == 0 ? 0 : program_.steps[s - 1].end;
    for (std::size_t j = begin; j < program_.steps[s].end; ++j) {
      const ProgramOp& op = program_.ops[j];
      std::optional<OpRef> after;
      if (op.after >= 0) after = refs_[static_cast<std::size_t>(op.after)];
      if (op.is_collective) {
        refs_.push_back(e.enqueue_collective(rank_, Engine::kWorld, op.collective, op.label, after));
      } else {
        const Time extra = op.per_rank ? options_.extra(rank_, op) : Time{};
        refs_.push_back(e.enqueue(rank_, op.stream, op.duration + extra, op.label, after));
      }
    }
    for (std::size_t j = begin; j < program_.steps[s].end; ++j) {
      bool wakes = false;
      for (const ProgramStep& later : program_.steps) wakes = wakes || later.issued_after == static_cast<std::int32_t>(j);
      if (wakes) e.wake_when_done(refs_[j], *this, j);
    }
  }
  const UniformProgram& program_;
  int rank_;
  const LevelizedOptions& options_;
  std::vector<OpRef> refs_;
};

// A training-like loop: data on the host, a broadcast, forward, backward in
// two pieces (the first one slower on some ranks), an all-reduce after
// each, the step after the last; each iteration issued when the previous
// step ends; construction's broadcast and the first iteration at time zero.
UniformProgram loop_program(int iterations) {
  UniformProgram p;
  std::uint32_t n = 0;
  const auto add = [&](StreamKind s, bool coll, std::int64_t v, std::int32_t after, bool per_rank = false) {
    ProgramOp op;
    op.stream = s;
    op.is_collective = coll;
    if (coll) op.collective = Collective{CollectiveKind::kAllReduce, v};
    else op.duration = Time::ns(v);
    op.label = OpLabel{0, 0, n++};
    op.after = after;
    op.per_rank = per_rank;
    p.ops.push_back(op);
    return static_cast<std::int32_t>(p.ops.size() - 1);
  };
  const std::int32_t init = add(StreamKind::kComm, true, 4000, -1);
  p.steps.push_back({p.ops.size(), -1, -1});
  std::int32_t previous = -1;
  for (int i = 0; i < iterations; ++i) {
    const std::int32_t data = add(StreamKind::kHost, false, 300, i == 0 ? init : -1);
    const std::int32_t bcast = add(StreamKind::kComm, true, 64, data);
    add(StreamKind::kCompute, false, 2000, bcast);
    const std::int32_t b0 = add(StreamKind::kCompute, false, 1500, -1, true);
    add(StreamKind::kComm, true, 9000, b0);
    const std::int32_t b1 = add(StreamKind::kCompute, false, 2500, -1);
    const std::int32_t ar1 = add(StreamKind::kComm, true, 3000, b1);
    const std::int32_t step = add(StreamKind::kCompute, false, 400, ar1);
    p.steps.push_back({p.ops.size(), previous, step});
    previous = step;
  }
  p.ops.push_back(ProgramOp{StreamKind::kComm, true, Collective{CollectiveKind::kBarrier, 0}, OpLabel{0, 0, n++}, {}, -1, false});
  p.steps.push_back({p.ops.size(), previous, static_cast<std::int32_t>(p.ops.size() - 1)});
  return p;
}

Time cost(const Collective& c, int n) { return Time::ns(500 + c.bytes / 2 + 100 * n); }

LevelizedOptions options_with_delays() {
  LevelizedOptions o;
  o.extra = [](int rank, const ProgramOp& op) { return Time::ns((rank * 7919 + static_cast<int>(op.label.index) * 104729) % 3000); };
  return o;
}

}  // namespace

TEST_CASE("a uniform program levelized gives every record the engine gives") {
  const UniformProgram p = loop_program(4);
  // A library that sends a barrier as a 4-byte all-reduce and all-gathers a
  // check before each collective, and the plain one: both evaluators must
  // price what it says.
  struct Rewriting final : CollectiveLibrary {
    Collective as_sent(Collective c) const override {
      return c.kind == CollectiveKind::kBarrier ? Collective{CollectiveKind::kAllReduce, 4} : c;
    }
    std::optional<Collective> check_before(int members) const override {
      return Collective{CollectiveKind::kAllGather, 64 * static_cast<std::int64_t>(members)};
    }
  } rewriting;
  for (const CollectiveLibrary* library : {&plain_library(), static_cast<const CollectiveLibrary*>(&rewriting)}) {
    for (int w : {1, 3, 17}) {
      CAPTURE(w);
      LevelizedOptions o = options_with_delays();
      o.library = library;
      Records lev;
      const std::optional<LevelizedRun> run = run_levelized(p, w, cost, o, lev);
      REQUIRE(run);

      Engine e(w, cost, EngineOptions{library, Time{}, Schedule::kTimeOrder, 1});
      Records eng;
      e.add_observer(eng);
      std::vector<std::unique_ptr<Replay>> ranks;
      for (int r = 0; r < w; ++r) ranks.push_back(std::make_unique<Replay>(p, r, o));
      for (auto& r : ranks) r->start(e);
      const RunSummary s = e.run();
      REQUIRE_FALSE(s.hung());

      CHECK(run->summary.end == s.end);
      CHECK(run->summary.rank_ops == s.rank_ops);
      const std::vector<OpRecord> a = lev.by_rank(), b = eng.by_rank();
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        CAPTURE(i);
        CHECK(a[i].rank == b[i].rank);
        CHECK(a[i].label.index == b[i].label.index);
        CHECK(a[i].stream == b[i].stream);
        CHECK(a[i].ready == b[i].ready);
        CHECK(a[i].start == b[i].start);
        CHECK(a[i].end == b[i].end);
        CHECK(a[i].arrival == b[i].arrival);
        CHECK(a[i].is_collective == b[i].is_collective);
        CHECK(a[i].group_seq == b[i].group_seq);
        CHECK(a[i].after.has_value() == b[i].after.has_value());
        if (a[i].after && b[i].after) {
          CHECK(a[i].after->stream == b[i].after->stream);
          CHECK(a[i].after->index == b[i].after->index);
        }
      }
      // Each step's end: the latest, over ranks, of the op it waits for.
      for (std::size_t st = 1; st < p.steps.size(); ++st) {
        Time latest;
        for (const OpRecord& r : b) {
          if (static_cast<std::int32_t>(r.label.index) == p.steps[st].waits_for) latest = max(latest, r.end);
        }
        CHECK(run->step_end[st] == latest);
      }
    }
  }
}

TEST_CASE("levelized: a step that issues nothing changes nothing") {
  UniformProgram p = loop_program(2);
  const UniformProgram plain = p;
  p.steps.insert(p.steps.begin() + 2, ProgramStep{p.steps[1].end, p.steps[1].waits_for, -1});
  p.steps.push_back(ProgramStep{p.ops.size(), p.steps.back().waits_for, -1});
  const LevelizedOptions o = options_with_delays();
  Records a, b;
  const auto with = run_levelized(p, 5, cost, o, a);
  const auto without = run_levelized(plain, 5, cost, o, b);
  REQUIRE(with);
  REQUIRE(without);
  CHECK(with->summary.end == without->summary.end);
  REQUIRE(a.ops.size() == b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) CHECK(a.ops[i].end == b.ops[i].end);
}

TEST_CASE("levelized: members further apart than the watchdog allows are the engine's to simulate") {
  const UniformProgram p = loop_program(2);
  LevelizedOptions o = options_with_delays();
  Records r;
  o.watchdog_timeout = Time::ns(10'000);
  CHECK(run_levelized(p, 8, cost, o, r));  // delays below 3 us
  o.watchdog_timeout = Time::ns(1'000);
  CHECK_FALSE(run_levelized(p, 8, cost, o, r));
}

TEST_CASE("levelized: a program that is not one is refused") {
  LevelizedOptions o = options_with_delays();
  Records r;
  UniformProgram p = loop_program(1);
  SUBCASE("a dependency on a later op") {
    p.ops[1].after = 5;
    CHECK_THROWS_AS(run_levelized(p, 2, cost, o, r), std::invalid_argument);
  }
  SUBCASE("steps that do not cover the ops") {
    p.steps.pop_back();
    CHECK_THROWS_AS(run_levelized(p, 2, cost, o, r), std::invalid_argument);
  }
  SUBCASE("a step that waits for an op outside it") {
    p.steps[1].waits_for = 0;
    CHECK_THROWS_AS(run_levelized(p, 2, cost, o, r), std::invalid_argument);
  }
  SUBCASE("no rank") { CHECK_THROWS_AS(run_levelized(p, 0, cost, o, r), std::invalid_argument); }
  SUBCASE("a per-rank op and nothing to add") {
    o.extra = nullptr;
    CHECK_THROWS_AS(run_levelized(p, 2, cost, o, r), std::invalid_argument);
  }
}
