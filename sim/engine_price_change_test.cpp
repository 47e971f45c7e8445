#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sim/engine_test_helpers.hpp"

// Collectives whose price changes in the middle of a run
// (Engine::schedule_price_change: a link that slows to a trickle).

using namespace ddpsim::sim;

using testing::ms;
using testing::Recorder;

namespace {

Time end_of(const Recorder& rec, std::uint32_t tag) {
  const auto it = std::find_if(rec.ops.begin(), rec.ops.end(), [&](const OpRecord& r) { return r.label.tag == tag; });
  REQUIRE(it != rec.ops.end());
  return it->end;
}

}  // namespace

TEST_CASE("a price change reprices the work a collective in flight has left, and prices the later ones anew") {
  // Two all-reduces back to back from 0, each 10 ms at the first price. At
  // 4 ms the price doubles: the first has done 40 % and does the other 60 %
  // at 20 ms for the whole, 12 ms: it ends at 16; the second runs 16..36.
  // A change at 12 finds the second 20 % done: 16 ms more, to 28.
  struct Case {
    double change_at_ms;
    Time first_end, second_end;
  };
  const Case cases[] = {{4, ms(16), ms(36)}, {10, ms(10), ms(30)}, {12, ms(10), ms(28)}, {100, ms(10), ms(20)}};  // the last after the end: no effect
  for (const Case& c : cases) {
    CAPTURE(c.change_at_ms);
    double cost_ms = 10;
    Engine e(2, [&cost_ms](const Collective&, int) { return Time::from_ms(cost_ms); });
    Recorder rec;
    e.add_observer(rec);
    for (int r = 0; r < 2; ++r) {
      e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0});
      e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {2, 0});
    }
    e.schedule_price_change(ms(c.change_at_ms), [&cost_ms] { cost_ms = 20; });
    const RunSummary s = e.run();
    CHECK(end_of(rec, 1) == c.first_end);
    CHECK(end_of(rec, 2) == c.second_end);
    CHECK(s.end == c.second_end);  // a change after the last work does not stretch the run
  }
}

TEST_CASE("a price change under communication slowed by compute keeps the work done at the slowed speed") {
  // c = 1: rank 0 computes 0..2, so the 10 ms all-reduce does 1 ms of work
  // by 2 and 2 more by 4; at 4 its price doubles: 70 % left at 20 ms is 14 ms, it ends at 18.
  double cost_ms = 10;
  EngineOptions options;
  options.comm_slowdown = 1;
  Engine e(2, [&cost_ms](const Collective&, int) { return Time::from_ms(cost_ms); }, options);
  Recorder rec;
  e.add_observer(rec);
  e.enqueue(0, StreamKind::kCompute, ms(2), {3, 0});
  for (int r = 0; r < 2; ++r) e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0});
  e.schedule_price_change(ms(4), [&cost_ms] { cost_ms = 20; });
  e.run();
  CHECK(end_of(rec, 3) == ms(2));
  CHECK(end_of(rec, 1) == ms(18));
}

TEST_CASE("a price change reprices the collectives of link-sharing groups") {
  // Groups {0, 1} and {2, 3} share links: each takes cost x (groups in
  // flight), 20 ms together. At 5 ms the cost doubles: a quarter done, the
  // rest at 40 ms for the whole: 30 ms more, both end at 35.
  double cost_ms = 10;
  Engine e(4, [](const Collective&, int) { return Time::zero(); });
  const std::vector<GroupId> groups = e.add_sharing_groups(
      {{0, 1}, {2, 3}}, StreamKind::kComm, [&cost_ms](const Collective&, int, const std::vector<InFlight>& in_flight) {
        return Time::from_ms(cost_ms * static_cast<double>(in_flight.size()));
      });
  Recorder rec;
  e.add_observer(rec);
  for (int r = 0; r < 4; ++r) {
    e.enqueue_collective(r, groups[static_cast<std::size_t>(r / 2)], {CollectiveKind::kAllReduce, 64},
                         {static_cast<std::uint32_t>(1 + r / 2), 0});
  }
  e.schedule_price_change(ms(5), [&cost_ms] { cost_ms = 20; });
  e.run();
  CHECK(end_of(rec, 1) == ms(35));
  CHECK(end_of(rec, 2) == ms(35));
}

TEST_CASE("a price change needs the time order, and is scheduled before the run, for a time not past") {
  EngineOptions major;
  major.schedule = Schedule::kRankMajor;
  Engine e(2, testing::fixed_cost(1), major);
  e.schedule_price_change(ms(3), [] {});
  const RunSummary s = e.run();
  REQUIRE(s.needs_time_order);
  CHECK(s.needs_time_order->find("the collectives' prices change at 3.000 ms") != std::string::npos);
  Engine later(2, testing::fixed_cost(1));
  later.enqueue(0, StreamKind::kHost, ms(2), {});
  later.run();
  CHECK_THROWS_AS(later.schedule_price_change(ms(1), [] {}), std::invalid_argument);
  CHECK_THROWS_AS(later.schedule_price_change(ms(5), [] {}), std::logic_error);  // after run(): scheduled too late
  Engine empty(2, testing::fixed_cost(1));
  CHECK_THROWS_AS(empty.schedule_price_change(ms(5), {}), std::invalid_argument);
}

TEST_CASE("a link that goes down after the last work does not stretch the run") {
  Engine e(2, testing::fixed_cost(4));
  for (int r = 0; r < 2; ++r) e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0});
  e.schedule_link_down(1, ms(50));
  const RunSummary s = e.run();
  CHECK(s.end == ms(4));
  CHECK(s.blocked.empty());
}
