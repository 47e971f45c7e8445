#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "sim/engine_test_helpers.hpp"

// Compute and communication that slow each other while they run at once
// (EngineOptions::compute_slowdown and comm_slowdown; docs/cost-models.md).

using namespace ddpsim::sim;

using testing::fixed_cost;
using testing::ms;
using testing::Recorder;

TEST_CASE("compute slowed by communication: a compute op runs 1 + s times slower while a collective is in flight") {
  // Rank 1 arrives at 2 ms, so the 4 ms all-reduce runs 2..6 on both ranks.
  // Rank 0's 10 ms compute (started at 0): 2 ms at full speed, 4 ms at half
  // (2 ms of work), the last 6 ms at full speed again: it ends at 12.
  // Rank 1's 3 ms compute starts at 2 beside the collective: 4 ms at half
  // speed is 2 ms of work, then 1 ms: it ends at 7. The host stream is not slowed.
  for (const double slowdown : {0.0, 1.0}) {
    CAPTURE(slowdown);
    EngineOptions options;
    options.compute_slowdown = slowdown;
    Engine e(2, fixed_cost(4), options);
    Recorder rec;
    e.add_observer(rec);
    e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0});
    e.enqueue(0, StreamKind::kCompute, ms(10), {2, 0});
    e.enqueue(0, StreamKind::kHost, ms(5), {3, 0});
    const OpRef arrive = e.enqueue(1, StreamKind::kHost, ms(2), {4, 0});
    e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0}, arrive);
    e.enqueue(1, StreamKind::kCompute, ms(3), {5, 0}, arrive);
    e.run();
    const auto end_of = [&](std::uint32_t tag) {
      return std::find_if(rec.ops.begin(), rec.ops.end(), [&](const OpRecord& r) { return r.label.tag == tag; })->end;
    };
    CHECK(end_of(2) == (slowdown > 0 ? ms(12) : ms(10)));
    CHECK(end_of(5) == (slowdown > 0 ? ms(7) : ms(5)));
    CHECK(end_of(3) == ms(5));
    CHECK(end_of(1) == ms(6));
  }
  // Time order only: a rank-major engine hands the run back.
  EngineOptions major_options;
  major_options.schedule = Schedule::kRankMajor;
  major_options.compute_slowdown = 1;
  Engine major(2, fixed_cost(4), major_options);
  CHECK(major.run().needs_time_order.has_value());
  major_options.compute_slowdown = -1;
  CHECK_THROWS_AS(Engine(1, fixed_cost(0), major_options), std::invalid_argument);
}

TEST_CASE("communication slowed by compute: a collective runs 1 + c times slower while a member computes") {
  // The 4 ms all-reduce starts at 2 (rank 1's arrival). Rank 0 computes
  // from 0: with c = 1 the collective does 2 ms of work at half speed while
  // rank 0 computes, then the rest at full speed.
  struct Case {
    double compute_slowdown, comm_slowdown;
    Time compute_ms, compute_end, collective_end;
  };
  // 6 ms of compute: 2..6 at half speed is 2 ms of work; 2 left: ends at 8.
  // Both slowdowns, 5 ms of compute: 2 ms alone, then 3 ms at half speed
  // ends at 8 (the collective still runs); the collective did 3 ms of work
  // by 8 and the last 1 alone: 9. Rank 1's host stream is never counted.
  const Case cases[] = {{0, 0, ms(6), ms(6), ms(6)},
                        {0, 1, ms(6), ms(6), ms(8)},
                        {1, 1, ms(5), ms(8), ms(9)},
                        {0, 1, ms(1), ms(1), ms(6)}};  // compute done before the collective starts
  for (const Case& c : cases) {
    CAPTURE(c.comm_slowdown);
    CAPTURE(c.compute_ms.count_ns());
    EngineOptions options;
    options.compute_slowdown = c.compute_slowdown;
    options.comm_slowdown = c.comm_slowdown;
    Engine e(2, fixed_cost(4), options);
    Recorder rec;
    e.add_observer(rec);
    e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0});
    e.enqueue(0, StreamKind::kCompute, c.compute_ms, {2, 0});
    const OpRef arrive = e.enqueue(1, StreamKind::kHost, ms(2), {4, 0});
    e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0}, arrive);
    e.enqueue(1, StreamKind::kHost, ms(20), {3, 0}, arrive);
    e.run();
    const auto end_of = [&](std::uint32_t tag) {
      return std::find_if(rec.ops.begin(), rec.ops.end(), [&](const OpRecord& r) { return r.label.tag == tag; })->end;
    };
    CHECK(end_of(2) == c.compute_end);
    CHECK(end_of(1) == c.collective_end);
  }
  EngineOptions major_options;
  major_options.schedule = Schedule::kRankMajor;
  major_options.comm_slowdown = 1;
  Engine major(2, fixed_cost(4), major_options);
  CHECK(major.run().needs_time_order.has_value());
  major_options.comm_slowdown = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(Engine(1, fixed_cost(0), major_options), std::invalid_argument);
}
