#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "sim/engine_test_helpers.hpp"
#include "sim/random.hpp"

using namespace ddpsim::sim;

using testing::fixed_cost;
using testing::ms;
using testing::Recorder;

TEST_CASE("events run in time order, ties in insertion order") {
  Engine e(3, fixed_cost(0));
  Recorder rec;
  e.add_observer(rec);
  e.enqueue(0, StreamKind::kCompute, ms(5), {0, 0});
  e.enqueue(1, StreamKind::kCompute, ms(3), {1, 0});
  e.enqueue(2, StreamKind::kCompute, ms(5), {2, 0});
  e.enqueue(2, StreamKind::kHost, ms(5), {3, 0});
  const RunSummary s = e.run();
  REQUIRE(rec.ops.size() == 4);
  CHECK(rec.ops[0].rank == 1);
  CHECK(rec.ops[1].rank == 0);  // same time as the next two: enqueued first
  CHECK(rec.ops[2].label.tag == 2);
  CHECK(rec.ops[3].label.tag == 3);
  CHECK(s.end == ms(5));
  CHECK(s.rank_ops == 4);
  CHECK_FALSE(s.hung());
}

TEST_CASE("a stream runs its operations one at a time, in order") {
  Engine e(1, fixed_cost(0));
  Recorder rec;
  e.add_observer(rec);
  e.enqueue(0, StreamKind::kCompute, ms(2), {0, 0});
  e.enqueue(0, StreamKind::kCompute, ms(1), {1, 0});
  e.run();
  REQUIRE(rec.ops.size() == 2);
  CHECK(rec.ops[1].ready == ms(2));
  CHECK(rec.ops[1].start == ms(2));
  CHECK(rec.ops[1].end == ms(3));
}

TEST_CASE("queues, waiters and wakes beyond what a stream holds in place keep their order") {
  // A stream holds 8 queued ops, 2 waiting streams and 1 wake in place. Here
  // 8 ops are queued, 3 have run when a process queues 12 more (the queue
  // outgrows its place while its head is mid-way), 4 streams wait on one op
  // and 3 processes on one stream.
  struct Waker final : Process {
    std::vector<std::pair<std::uint64_t, Time>>* log = nullptr;
    void on_wake(Engine& e, std::uint64_t token) override { log->emplace_back(token, e.now()); }
  };
  struct Feeder final : Process {
    void on_wake(Engine& e, std::uint64_t) override {
      for (std::uint32_t i = 8; i < 20; ++i) e.enqueue(0, StreamKind::kCompute, ms(1), {0, i});
    }
  };
  Engine e(5, fixed_cost(0));
  Recorder rec;
  e.add_observer(rec);
  std::vector<OpRef> ops;
  for (std::uint32_t i = 0; i < 8; ++i) ops.push_back(e.enqueue(0, StreamKind::kCompute, ms(1), {0, i}));
  Feeder feeder;
  e.wake_when_done(ops[2], feeder, 0);  // at 3 ms
  for (int r = 1; r < 5; ++r) e.enqueue(r, StreamKind::kCompute, ms(r), {1, 0}, ops[5]);
  std::vector<std::pair<std::uint64_t, Time>> log;
  Waker w[3];
  for (std::uint64_t k = 0; k < 3; ++k) {
    w[k].log = &log;
    e.wake_when_done(ops[7 - k], w[k], k);  // ends at 8, 7, 6 ms
  }
  const RunSummary s = e.run();
  CHECK_FALSE(s.hung());
  std::vector<std::uint32_t> order;
  for (const OpRecord& r : rec.ops) {
    if (r.rank != 0) {
      CHECK(r.start == ms(6));  // every waiter starts when op 5 ends
      CHECK(r.end == ms(6 + r.rank));
      continue;
    }
    order.push_back(r.label.iteration);
    CHECK(r.end == ms(r.label.iteration + 1));
  }
  std::vector<std::uint32_t> expected(20);
  for (std::uint32_t i = 0; i < 20; ++i) expected[i] = i;
  CHECK(order == expected);
  const std::vector<std::pair<std::uint64_t, Time>> woken{{2, ms(6)}, {1, ms(7)}, {0, ms(8)}};
  CHECK(log == woken);
}

TEST_CASE("a cross-stream dependency delays the start, not the stream's readiness") {
  Engine e(1, fixed_cost(0));
  Recorder rec;
  e.add_observer(rec);
  const OpRef data = e.enqueue(0, StreamKind::kHost, ms(4), {0, 0});
  e.enqueue(0, StreamKind::kCompute, ms(1), {1, 0}, data);
  e.run();
  REQUIRE(rec.ops.size() == 2);
  CHECK(rec.ops[1].ready == Time::zero());
  CHECK(rec.ops[1].start == ms(4));
  CHECK(rec.ops[1].end == ms(5));
}

TEST_CASE("a collective starts when the last member arrives and lasts its cost") {
  Engine e(3, fixed_cost(10));
  Recorder rec;
  e.add_observer(rec);
  for (int r = 0; r < 3; ++r) {
    const OpRef c = e.enqueue(r, StreamKind::kCompute, ms(r + 1), {0, 0});
    e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0}, c);
  }
  const RunSummary s = e.run();
  CHECK_FALSE(s.hung());
  int collectives = 0;
  for (const OpRecord& r : rec.ops) {
    if (!r.is_collective) continue;
    ++collectives;
    CHECK(r.arrival == ms(r.rank + 1));
    CHECK(r.start == ms(3));
    CHECK(r.end == ms(13));
    CHECK(r.group_seq == 0);
  }
  CHECK(collectives == 3);
}

TEST_CASE("collectives match by per-group sequence number, never by label") {
  Engine e(2, fixed_cost(1));
  Recorder rec;
  e.add_observer(rec);
  // Rank 0 labels its collectives iterations 0 and 1, rank 1 labels them 7 and 9.
  e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 0});
  e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 1});
  e.enqueue(1, StreamKind::kCompute, ms(5), {0, 0});
  e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 7});
  e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 9});
  CHECK_FALSE(e.run().hung());
  std::vector<OpRecord> rank0;
  for (const auto& r : rec.ops) {
    if (r.is_collective && r.rank == 0) rank0.push_back(r);
  }
  REQUIRE(rank0.size() == 2);
  CHECK(rank0[0].group_seq == 0);
  CHECK(rank0[0].end == ms(1));  // no dependency on rank 1's compute: both arrive at 0
  CHECK(rank0[1].group_seq == 1);
  CHECK(rank0[1].start == ms(1));  // waits for the comm stream to be free
  CHECK(rank0[1].end == ms(2));
}

TEST_CASE("a collective waits for a member whose communication stream is busy") {
  Engine e(2, fixed_cost(2));
  Recorder rec;
  e.add_observer(rec);
  // Rank 1's comm stream is busy with a 6 ms point op before the collective.
  e.enqueue(1, StreamKind::kComm, ms(6), {9, 0});
  e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 0});
  e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {0, 0});
  e.run();
  for (const auto& r : rec.ops) {
    if (!r.is_collective) continue;
    CHECK(r.start == ms(6));
    CHECK(r.end == ms(8));
  }
}

TEST_CASE("a missing member ends the run as a hang naming who waits where") {
  Engine e(3, fixed_cost(1));
  // Ranks 0 and 2 reach all-reduce #0; rank 1 never issues it.
  for (int r : {0, 2}) {
    const OpRef ar = e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 8}, {1, 3});
    e.enqueue(r, StreamKind::kCompute, ms(1), {2, 3}, ar);
  }
  e.enqueue(1, StreamKind::kCompute, ms(1), {0, 3});
  const RunSummary s = e.run();
  REQUIRE(s.hung());
  REQUIRE(s.blocked.size() == 4);
  const BlockedOp& b0 = s.blocked[0];
  CHECK(b0.rank == 0);
  CHECK(b0.stream == StreamKind::kCompute);
  REQUIRE(b0.waits_for.has_value());
  CHECK(b0.waits_for->stream == Engine::stream_id(0, StreamKind::kComm));
  const BlockedOp& b1 = s.blocked[1];
  CHECK(b1.rank == 0);
  CHECK(b1.stream == StreamKind::kComm);
  CHECK(b1.in_rendezvous);
  CHECK(b1.group_seq == 0);
  CHECK(b1.label.iteration == 3);
  CHECK(b1.missing_ranks == std::vector<int>{1});
  CHECK(s.blocked[3].rank == 2);
  CHECK(s.blocked[3].missing_ranks == std::vector<int>{1});
}

TEST_CASE("processes are woken when the awaited operation ends") {
  struct Loop final : Process {
    int rank;
    int remaining;
    std::vector<Time> woke;
    Loop(int r, int n) : rank(r), remaining(n) {}
    void issue(Engine& e) {
      const OpRef c = e.enqueue(rank, StreamKind::kCompute, Time::from_ms(rank + 1), {0, 0});
      const OpRef ar = e.enqueue_collective(rank, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {1, 0}, c);
      e.wake_when_done(ar, *this, 0);
    }
    void on_wake(Engine& e, std::uint64_t) override {
      woke.push_back(e.now());
      if (--remaining > 0) issue(e);
    }
  };
  Engine e(2, fixed_cost(1));
  Loop a(0, 3), b(1, 3);
  a.issue(e);
  b.issue(e);
  const RunSummary s = e.run();
  CHECK_FALSE(s.hung());
  // Each iteration: the slower rank computes 2 ms, then 1 ms of all-reduce.
  CHECK(a.woke == std::vector<Time>{ms(3), ms(6), ms(9)});
  CHECK(b.woke == a.woke);
}

TEST_CASE("invalid engine calls are rejected") {
  Engine e(2, fixed_cost(1));
  CHECK_THROWS_AS(e.enqueue(2, StreamKind::kCompute, ms(1), {}), std::out_of_range);
  CHECK_THROWS_AS(e.enqueue(0, StreamKind::kCompute, Time::ns(-1), {}), std::invalid_argument);
  CHECK_THROWS_AS(e.enqueue(0, StreamKind::kCompute, ms(1), {}, OpRef{0, 5}), std::invalid_argument);
  CHECK_THROWS_AS(Engine(0, fixed_cost(1)), std::invalid_argument);
}

namespace {

void all_reduce(Engine& e, int rank, std::int64_t bytes, std::uint32_t iteration = 0) {
  e.enqueue_collective(rank, Engine::kWorld, {CollectiveKind::kAllReduce, bytes}, {1, iteration});
}

}  // namespace

TEST_CASE("same op and size with different labels completes and is recorded as a misalignment") {
  Engine e(2, fixed_cost(1));
  all_reduce(e, 0, 64, 3);
  all_reduce(e, 1, 64, 4);
  const RunSummary s = e.run();
  CHECK_FALSE(s.hung());
  REQUIRE(s.misalignments.size() == 1);
  CHECK(s.misalignments[0].labels[0].iteration == 3);
  CHECK(s.misalignments[0].labels[1].iteration == 4);
}

namespace {

EngineOptions scheduled(Schedule schedule, Time watchdog = {}, int threads = 1) {
  EngineOptions o;
  o.schedule = schedule;
  o.watchdog_timeout = watchdog;
  o.threads = threads;
  return o;
}

// Each rank's records in its own list: with several engine threads, ranks
// finish ops at once.
struct RankRecorder final : Observer {
  std::vector<std::vector<OpRecord>> ops;
  explicit RankRecorder(int world) : ops(static_cast<std::size_t>(world)) {}
  void on_op(const OpRecord& r) override { ops[static_cast<std::size_t>(r.rank)].push_back(r); }
};

// A rank's training-like loop with random durations: data on the host, a
// collective after it, compute after that, backward pieces feeding
// collectives, a step after the last collective; woken at the step's end.
struct RandomLoop final : Process {
  int rank;
  int remaining;
  Rng rng;
  RandomLoop(int r, int iterations, std::uint64_t seed) : rank(r), remaining(iterations), rng(Rng::for_stream(seed, {static_cast<std::uint64_t>(r)})) {}
  Time draw(double max_ms) { return Time::ns(static_cast<std::int64_t>(rng.uniform01() * max_ms * 1e6)); }
  void issue(Engine& e) {
    const auto it = static_cast<std::uint32_t>(remaining);
    const OpRef data = e.enqueue(rank, StreamKind::kHost, draw(2), {0, it});
    const OpRef bcast = e.enqueue_collective(rank, Engine::kWorld, {CollectiveKind::kBroadcast, 64}, {1, it}, data);
    OpRef compute = e.enqueue(rank, StreamKind::kCompute, draw(3), {2, it}, bcast);
    OpRef last = compute;
    for (std::uint32_t b = 0; b < 3; ++b) {
      compute = e.enqueue(rank, StreamKind::kCompute, draw(1), {3, it, b});
      last = e.enqueue_collective(rank, Engine::kWorld, {CollectiveKind::kAllReduce, 1024}, {4, it, b}, compute);
    }
    e.wake_when_done(e.enqueue(rank, StreamKind::kCompute, draw(0.5), {5, it}, last), *this, 0);
  }
  void on_wake(Engine& e, std::uint64_t) override {
    if (--remaining > 0) issue(e);
  }
};

// Runs RandomLoop on every rank; the records sorted by rank, stream and label.
std::vector<OpRecord> random_run(Schedule schedule, int world, std::uint64_t seed, RunSummary* summary = nullptr,
                                 int threads = 1) {
  Engine e(world, [](const Collective& c, int n) { return Time::ns(1000 * n + c.bytes); }, scheduled(schedule, {}, threads));
  RankRecorder by_rank(world);
  e.add_observer(by_rank);
  std::vector<std::unique_ptr<RandomLoop>> loops;
  for (int r = 0; r < world; ++r) {
    loops.push_back(std::make_unique<RandomLoop>(r, 6, seed));
    loops.back()->issue(e);
  }
  const RunSummary s = e.run();
  if (summary != nullptr) *summary = s;
  Recorder rec;
  for (const auto& ops : by_rank.ops) rec.ops.insert(rec.ops.end(), ops.begin(), ops.end());
  const auto key = [](const OpRecord& r) {
    return std::tuple(r.rank, r.stream, r.label.iteration, r.label.tag, r.label.index);
  };
  std::stable_sort(rec.ops.begin(), rec.ops.end(), [&](const OpRecord& a, const OpRecord& b) { return key(a) < key(b); });
  return rec.ops;
}

void check_same_times(const std::vector<OpRecord>& a, const std::vector<OpRecord>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].rank == b[i].rank);
    CHECK(a[i].label.tag == b[i].label.tag);
    CHECK(a[i].ready == b[i].ready);
    CHECK(a[i].start == b[i].start);
    CHECK(a[i].end == b[i].end);
    CHECK(a[i].arrival == b[i].arrival);
    CHECK(a[i].group_seq == b[i].group_seq);
  }
}

}  // namespace

TEST_CASE("rank-major: every op gets the times time order gives it") {
  for (std::uint64_t seed : {1, 2, 3}) {
    RunSummary t, m;
    const auto a = random_run(Schedule::kTimeOrder, 7, seed, &t);
    const auto b = random_run(Schedule::kRankMajor, 7, seed, &m);
    REQUIRE(a.size() == 7u * 6 * 10);
    check_same_times(a, b);
    CHECK(t.end == m.end);
    CHECK(t.rank_ops == m.rank_ops);
    CHECK_FALSE(m.hung());
  }
}

TEST_CASE("rank-major on several threads: the same times as on one") {
  RunSummary one, three;
  const auto a = random_run(Schedule::kRankMajor, 7, 5, &one, 1);
  const auto b = random_run(Schedule::kRankMajor, 7, 5, &three, 3);
  check_same_times(a, b);  // stable sort: each rank's order kept within a key
  CHECK(one.end == three.end);
  CHECK(one.rank_ops == three.rank_ops);
  CHECK(one.events == three.events);
  // More threads than ranks: one per rank.
  check_same_times(a, random_run(Schedule::kRankMajor, 7, 5, nullptr, 16));
}

TEST_CASE("rank-major: a hang is reported as time order reports it") {
  const auto hang = [](Schedule schedule) {
    Engine e(3, fixed_cost(1), scheduled(schedule));
    for (int r : {0, 2}) {
      const OpRef c = e.enqueue(r, StreamKind::kCompute, ms(r + 1), {0, 0});
      const OpRef ar = e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 8}, {1, 0}, c);
      e.enqueue(r, StreamKind::kCompute, ms(1), {2, 0}, ar);
    }
    return e.run();
  };
  const RunSummary t = hang(Schedule::kTimeOrder), m = hang(Schedule::kRankMajor);
  REQUIRE(m.blocked.size() == t.blocked.size());
  REQUIRE(m.blocked.size() == 4);
  for (std::size_t i = 0; i < m.blocked.size(); ++i) {
    CHECK(m.blocked[i].rank == t.blocked[i].rank);
    CHECK(m.blocked[i].since == t.blocked[i].since);
    CHECK(m.blocked[i].missing_ranks == t.blocked[i].missing_ranks);
  }
  REQUIRE(m.open.size() == 1);
  CHECK(m.open[0].members[2].arrival == ms(3));
  CHECK(m.end == t.end);
}

TEST_CASE("rank-major: what needs the global order stops the run and says why") {
  const auto stopped = [](Engine& e, const std::string& why) {
    const RunSummary s = e.run();
    REQUIRE(s.needs_time_order);
    CHECK(s.needs_time_order->find(why) != std::string::npos);
    CHECK(s.rank_ops == 0);
    CHECK(s.blocked.empty());
  };
  const EngineOptions major = scheduled(Schedule::kRankMajor);
  SUBCASE("a scheduled crash") {
    Engine e(2, fixed_cost(1), major);
    e.schedule_crash(1, ms(1), "killed");
    stopped(e, "rank 1 is to crash");
  }
  SUBCASE("a link to go down") {
    Engine e(2, fixed_cost(1), major);
    e.schedule_link_down(1, ms(1));
    stopped(e, "rank 1's link is to go down");
  }
  SUBCASE("a process that crashes its rank") {
    struct Crasher final : Process {
      void on_wake(Engine& e, std::uint64_t) override { e.crash(0, "boom"); }
    } crasher;
    Engine e(2, fixed_cost(1), major);
    e.wake_when_done(e.enqueue(0, StreamKind::kHost, ms(1), {}), crasher, 0);
    stopped(e, "rank 0 crashed: boom");
  }
  SUBCASE("members that disagree") {
    Engine e(2, fixed_cost(1), major);
    all_reduce(e, 0, 4);
    all_reduce(e, 1, 8);
    stopped(e, "its members disagree");
  }
  SUBCASE("the watchdog would fire while the first member waits") {
    Engine e(2, fixed_cost(1), scheduled(Schedule::kRankMajor, ms(5)));
    all_reduce(e, 0, 4);
    e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {1, 0}, e.enqueue(1, StreamKind::kCompute, ms(6), {}));
    stopped(e, "the watchdog fires");
  }
  SUBCASE("a hang with the watchdog on") {
    Engine e(2, fixed_cost(1), scheduled(Schedule::kRankMajor, ms(5)));
    all_reduce(e, 0, 4);
    stopped(e, "never completes and the watchdog is on");
  }
  SUBCASE("a crash before the run") {
    Engine e(2, fixed_cost(1), major);
    all_reduce(e, 0, 4);
    e.crash(1, "gone");
    stopped(e, "rank 1 crashed: gone");
  }
  SUBCASE("a member 5 ms late under a 5 ms watchdog is in time") {
    Engine e(2, fixed_cost(1), scheduled(Schedule::kRankMajor, ms(5)));
    all_reduce(e, 0, 4);
    e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 4}, {1, 0}, e.enqueue(1, StreamKind::kCompute, ms(5), {}));
    CHECK_FALSE(e.run().hung());
  }
}

TEST_CASE("processes woken at the same instant run in the order they asked, on both schedules") {
  // Two processes of rank 0 wait for one op; each then enqueues on the
  // compute stream, whose FIFO order shows who ran first.
  struct Issue final : Process {
    Time duration;
    std::uint32_t tag;
    explicit Issue(Time d, std::uint32_t t) : duration(d), tag(t) {}
    void on_wake(Engine& e, std::uint64_t) override { e.enqueue(0, StreamKind::kCompute, duration, {tag, 0}); }
  };
  for (const Schedule schedule : {Schedule::kTimeOrder, Schedule::kRankMajor}) {
    CAPTURE(static_cast<int>(schedule));
    Engine e(1, fixed_cost(0), scheduled(schedule));
    Recorder rec;
    e.add_observer(rec);
    Issue first(ms(5), 1), second(ms(2), 2), third(ms(1), 3);
    const OpRef gate = e.enqueue(0, StreamKind::kHost, ms(1), {0, 0});
    e.wake_when_done(gate, first, 0);
    e.wake_when_done(gate, second, 0);
    e.wake_when_done(gate, third, 0);
    CHECK_FALSE(e.run().hung());
    REQUIRE(rec.ops.size() == 4);
    CHECK(rec.ops[1].label.tag == 1);
    CHECK(rec.ops[1].end == ms(6));
    CHECK(rec.ops[2].label.tag == 2);
    CHECK(rec.ops[2].end == ms(8));
    CHECK(rec.ops[3].label.tag == 3);
    CHECK(rec.ops[3].end == ms(9));
  }
}

TEST_CASE("rank-major: work stays on its rank") {
  Engine e(2, fixed_cost(1), scheduled(Schedule::kRankMajor));
  const OpRef other = e.enqueue(1, StreamKind::kCompute, ms(1), {});
  CHECK_THROWS_AS(e.enqueue(0, StreamKind::kCompute, ms(1), {}, other), std::logic_error);
  struct Stray final : Process {
    void on_wake(Engine& e, std::uint64_t) override { e.enqueue(1, StreamKind::kHost, Time::from_ms(1), {}); }
  } stray;
  e.wake_when_done(e.enqueue(0, StreamKind::kHost, ms(1), {}), stray, 0);
  CHECK_THROWS_AS(e.run(), std::logic_error);
}

TEST_CASE("a link that goes down: its collectives stall, in flight or later, until the watchdog") {
  // Three all-reduces of 4 ms each on 2 ranks, back to back from 0: 0-4, 4-8, 8-12.
  const auto run = [](Time down_at, Time watchdog) {
    EngineOptions options;
    options.watchdog_timeout = watchdog;
    Engine e(2, fixed_cost(4), options);
    Recorder rec;
    e.add_observer(rec);
    for (int r : {0, 1}) {
      for (std::uint32_t i = 0; i < 3; ++i) e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, i});
    }
    if (down_at >= Time::zero()) e.schedule_link_down(1, down_at);
    const RunSummary s = e.run();
    return std::make_pair(s, rec.ops.size());
  };
  // Down at 6: the second (in flight, 4..8) never ends; the first did, on both ranks.
  const auto [stalled, done] = run(ms(6), Time::zero());
  CHECK(stalled.hung());
  CHECK(done == 2);
  REQUIRE(!stalled.open.empty());
  CHECK(stalled.open.front().seq == 1);
  CHECK_FALSE(stalled.watchdog_at);
  // Down at 4, as the second starts: the same. Down before anything: nothing completes.
  CHECK(run(ms(4), Time::zero()).second == 2);
  CHECK(run(Time::zero(), Time::zero()).second == 0);
  // A watchdog of 100 ms times the stalled one out from its first arrival (4 ms).
  const auto [timed_out, _] = run(ms(6), ms(100));
  REQUIRE(timed_out.watchdog_at);
  CHECK(*timed_out.watchdog_at == ms(104));
  REQUIRE(timed_out.watchdog_collective);
  CHECK(timed_out.watchdog_collective->second == 1);
  // A watchdog shorter than the collective: the stall is timed out when found (at its would-be end, 8).
  const auto [late, __] = run(ms(6), ms(1));
  REQUIRE(late.watchdog_at);
  CHECK(*late.watchdog_at == ms(8));
  // Never down: all three end at 12.
  const auto [fine, all] = run(ms(-1), Time::zero());
  CHECK_FALSE(fine.hung());
  CHECK(all == 6);
  CHECK(fine.end == ms(12));
  Engine e(2, fixed_cost(1));
  CHECK_THROWS_AS(e.schedule_link_down(2, ms(1)), std::out_of_range);
}
