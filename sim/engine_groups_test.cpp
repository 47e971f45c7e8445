// Process groups on the engine: their own sequence numbers, members,
// streams and pricing (sim/engine.hpp: Engine::add_group).

#include <doctest/doctest.h>

#include <vector>

#include "sim/engine.hpp"
#include "sim/engine_test_helpers.hpp"

using namespace ddpsim::sim;

using testing::fixed_cost;
using testing::Recorder;

TEST_CASE("process groups: collectives match among a group's members, by its own sequence numbers, priced over its size") {
  for (Schedule schedule : {Schedule::kTimeOrder, Schedule::kRankMajor}) {
    CAPTURE(static_cast<int>(schedule));
    EngineOptions o;
    o.schedule = schedule;
    Engine e(4, [](const Collective& c, int n) { return Time::ns(1000 * n + c.bytes); }, o);
    const GroupId even = e.add_group({0, 2});
    const GroupId odd = e.add_group({3, 1});  // in the order given
    Recorder rec;
    e.add_observer(rec);
    // Ranks 0 and 2 reduce-scatter over their group; 1 and 3 all-gather over theirs, 3 late;
    // then everyone all-reduces over the world.
    for (int r : {0, 2}) {
      e.enqueue_collective(r, even, {CollectiveKind::kReduceScatter, 64}, {1, 0});
      e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 8}, {2, 0});
    }
    e.enqueue_collective(1, odd, {CollectiveKind::kAllGather, 32}, {1, 0});
    e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 8}, {2, 0});
    e.enqueue_collective(3, odd, {CollectiveKind::kAllGather, 32}, {1, 0},
                         e.enqueue(3, StreamKind::kCompute, Time::ns(500), {0, 0}));
    e.enqueue_collective(3, Engine::kWorld, {CollectiveKind::kAllReduce, 8}, {2, 0});
    const RunSummary s = e.run();
    REQUIRE_FALSE(s.hung());
    std::vector<OpRecord> even_ops, odd_ops, world_ops;
    for (const OpRecord& r : rec.ops) {
      if (!r.is_collective) continue;
      (r.label.tag == 2 ? world_ops : r.collective.kind == CollectiveKind::kReduceScatter ? even_ops : odd_ops).push_back(r);
    }
    REQUIRE(even_ops.size() == 2);
    REQUIRE(odd_ops.size() == 2);
    REQUIRE(world_ops.size() == 4);
    for (const OpRecord& r : even_ops) {
      CHECK(r.start == Time::zero());
      CHECK(r.end == Time::ns(2064));  // priced over 2 members
      CHECK(r.group_seq == 0);
    }
    for (const OpRecord& r : odd_ops) {
      CHECK(r.start == Time::ns(500));  // waits for rank 3 only
      CHECK(r.end == Time::ns(2532));
    }
    for (const OpRecord& r : world_ops) {
      CHECK(r.start == Time::ns(2532));
      CHECK(r.end == Time::ns(2532 + 4008));  // priced over 4
      CHECK(r.group_seq == 0);                // the world's first
    }
  }
}

TEST_CASE("a process group on a stream of its own runs beside the world's collectives, priced its own way") {
  // HSDP's replica all-reduce: its own NCCL communicator and stream, its
  // own topology. Ranks {0, 1} all-reduce over `pair` (on the host stream,
  // 7 us whatever the size) while the world all-gathers (1 us a member).
  Engine e(2, [](const Collective&, int n) { return Time::from_us(n); });
  const GroupId pair = e.add_group({0, 1}, StreamKind::kHost, [](const Collective&, int) { return Time::from_us(7); });
  Recorder rec;
  e.add_observer(rec);
  for (int r = 0; r < 2; ++r) {
    e.enqueue_collective(r, pair, {CollectiveKind::kAllReduce, 64}, {1, 0});
    e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllGather, 64}, {2, 0, 0});
    e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllGather, 64}, {2, 0, 1});
  }
  const RunSummary s = e.run();
  REQUIRE_FALSE(s.hung());
  for (const OpRecord& r : rec.ops) {
    if (r.label.tag == 1) {
      CHECK(r.stream == StreamKind::kHost);
      CHECK(r.start == Time::zero());
      CHECK(r.end == Time::from_us(7));
    } else {
      CHECK(r.stream == StreamKind::kComm);
      CHECK(r.end == Time::from_us(2 * (r.label.index + 1)));  // not behind the all-reduce
    }
  }
  CHECK(s.end == Time::from_us(7));
  EngineOptions o;
  o.schedule = Schedule::kRankMajor;
  Engine major(2, [](const Collective&, int n) { return Time::from_us(n); }, o);
  major.add_group({0, 1}, StreamKind::kHost, {});
  CHECK(major.run().needs_time_order == "a process group on a stream of its own");
}

TEST_CASE("a process group's member that never arrives is the one reported missing") {
  Engine e(4, fixed_cost(1));
  const GroupId pair = e.add_group({1, 2});
  e.enqueue_collective(1, pair, {CollectiveKind::kAllGather, 16}, {1, 0});
  const RunSummary s = e.run();
  REQUIRE(s.hung());
  REQUIRE(s.blocked.size() == 1);
  CHECK(s.blocked[0].group == pair);
  CHECK(s.blocked[0].missing_ranks == std::vector<int>{2});
  CHECK_THROWS_AS(e.add_group({}), std::invalid_argument);
  CHECK_THROWS_AS(e.add_group({0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(e.add_group({4}), std::out_of_range);
  CHECK_THROWS_AS(e.enqueue_collective(0, pair, {CollectiveKind::kAllGather, 16}, {1, 0}), std::out_of_range);
}

namespace {
// Two groups that share links: a collective alone takes 10 us, with the
// other's in flight 20 us (each gets half the bandwidth). Group A = {0, 1}
// all-reduces at 0; group B = {2, 3} after `b_delay` of compute. Returns
// each group's collective record, and the in-flight sets it was priced for.
struct SharedRun {
  OpRecord a, b;
  std::vector<std::vector<int>> priced;
};
SharedRun shared_run(Time b_delay) {
  SharedRun out;
  Engine e(4, fixed_cost(1));
  const std::vector<GroupId> ids = e.add_sharing_groups(
      {{0, 1}, {2, 3}}, std::vector<StreamKind>{StreamKind::kHost, StreamKind::kComm},
      [&out](const Collective& c, int group, const std::vector<InFlight>& in_flight) {
        std::vector<int> indices;
        for (const InFlight& f : in_flight) {
          indices.push_back(f.group);
          // Each entry carries what its group runs: A 64 bytes, B 128.
          CHECK(f.collective == Collective{CollectiveKind::kAllReduce, f.group == 0 ? 64 : 128});
        }
        CHECK(std::find(indices.begin(), indices.end(), group) != indices.end());
        CHECK(c.bytes == (group == 0 ? 64 : 128));
        out.priced.push_back(indices);
        return Time::from_us(10 * static_cast<double>(in_flight.size()));
      });
  REQUIRE(ids.size() == 2);
  Recorder rec;
  e.add_observer(rec);
  for (int r : {0, 1}) e.enqueue_collective(r, ids[0], {CollectiveKind::kAllReduce, 64}, {1, 0});
  for (int r : {2, 3}) {  // B's group on the comm stream, after host work
    e.enqueue_collective(r, ids[1], {CollectiveKind::kAllReduce, 128}, {2, 0}, e.enqueue(r, StreamKind::kHost, b_delay, {0, 0}));
  }
  const RunSummary s = e.run();
  REQUIRE_FALSE(s.hung());
  for (const OpRecord& r : rec.ops) {
    if (r.is_collective) (r.label.tag == 1 ? out.a : out.b) = r;
  }
  return out;
}
}  // namespace

TEST_CASE("groups that share links: each collective progresses at the rate its in-flight set allows") {
  SUBCASE("at once: both take the shared time from the start") {
    const SharedRun r = shared_run(Time::zero());
    CHECK(r.a.start == Time::zero());
    CHECK(r.a.end == Time::from_us(20));
    CHECK(r.b.end == Time::from_us(20));
    CHECK(r.priced == std::vector<std::vector<int>>{{0, 1}, {0, 1}});  // one repricing for the instant
    CHECK(r.a.stream == StreamKind::kHost);  // each group on its own stream
    CHECK(r.b.stream == StreamKind::kComm);
  }
  SUBCASE("staggered: A runs alone for 5 us, then both share; B finishes alone") {
    // A: half its work alone by 5 us; the other half at half speed, 10 us: ends at 15.
    // B: from 5 to 15 at half speed, half its work; the rest alone, 5 us: ends at 20.
    const SharedRun r = shared_run(Time::from_us(5));
    CHECK(r.a.end == Time::from_us(15));
    CHECK(r.b.start == Time::from_us(5));
    CHECK(r.b.end == Time::from_us(20));
    CHECK(r.priced == std::vector<std::vector<int>>{{0}, {0, 1}, {0, 1}, {1}});
  }
  SUBCASE("apart: B starts after A ends, and both run alone") {
    const SharedRun r = shared_run(Time::from_us(12));
    CHECK(r.a.end == Time::from_us(10));
    CHECK(r.b.end == Time::from_us(22));
  }
}

TEST_CASE("groups that share links: refused by the rank-major schedule and when malformed") {
  EngineOptions o;
  o.schedule = Schedule::kRankMajor;
  Engine major(2, fixed_cost(1), o);
  const auto one = [](const Collective&, int, const std::vector<InFlight>&) { return Time::from_us(1); };
  major.add_sharing_groups({{0}, {1}}, StreamKind::kComm, one);
  CHECK(major.run().needs_time_order == "process groups that share links");
  Engine e(2, fixed_cost(1));
  CHECK_THROWS_AS(e.add_sharing_groups({{0}, {1}}, StreamKind::kComm, {}), std::invalid_argument);
  CHECK_THROWS_AS(e.add_sharing_groups({}, StreamKind::kComm, one), std::invalid_argument);
  CHECK_THROWS_AS(e.add_sharing_groups({{0}, {2}}, StreamKind::kComm, one), std::out_of_range);
  CHECK_THROWS_AS(e.add_sharing_groups({{0}, {1}}, std::vector<StreamKind>{StreamKind::kComm}, one), std::invalid_argument);
}
