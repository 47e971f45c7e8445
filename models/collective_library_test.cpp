// PyTorch's process groups as the engine runs them (models/collective_library.hpp):
// NCCL's and gloo's rules for collectives that disagree and for dead peers.

#include "models/collective_library.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "sim/engine.hpp"

using namespace ddpsim::sim;
using ddpsim::models::Backend;
namespace models = ddpsim::models;

namespace {

Time ms(double v) { return Time::from_ms(v); }
CollectiveCostFn fixed_cost(double cost_ms) {
  return [cost_ms](const Collective&, int) { return Time::from_ms(cost_ms); };
}

// A backend's library and engine options; the options point into it.
struct Setup {
  std::unique_ptr<CollectiveLibrary> library;
  EngineOptions options;
};
Setup with(Backend backend, double watchdog_s) {
  Setup s{models::collective_library(backend), {}};
  s.options = EngineOptions{s.library.get(), Time::from_ms(watchdog_s * 1000)};
  return s;
}

void all_reduce(Engine& e, int rank, std::int64_t bytes, std::uint32_t iteration = 0) {
  e.enqueue_collective(rank, Engine::kWorld, {CollectiveKind::kAllReduce, bytes}, {1, iteration});
}

}  // namespace

TEST_CASE("nccl: paired all-reduces of different sizes never complete; the watchdog ends the job") {
  const Setup e_setup = with(Backend::kNccl, 600);
  Engine e(2, fixed_cost(1), e_setup.options);
  all_reduce(e, 0, 4);
  e.enqueue(1, StreamKind::kCompute, ms(5), {0, 0});
  e.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 1024}, {1, 0},
                       OpRef{Engine::stream_id(1, StreamKind::kCompute), 0});
  const RunSummary s = e.run();
  REQUIRE(s.watchdog_at.has_value());
  CHECK(*s.watchdog_at == Time::from_ms(600'000));  // rank 0 arrived at 0 and waited 600 s
  CHECK(s.hung());
  REQUIRE(s.open.size() == 1);
  CHECK(s.open[0].stalled);
  CHECK(s.open[0].members[1].collective.bytes == 1024);
  CHECK(s.crashes.empty());
}

TEST_CASE("nccl: a barrier is a one-element all-reduce") {
  const Setup e_setup = with(Backend::kNccl, 600);
  Engine e(2, fixed_cost(1), e_setup.options);
  e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kBarrier, 0}, {2, 0});
  all_reduce(e, 1, 4);
  const RunSummary s = e.run();
  CHECK_FALSE(s.hung());
  REQUIRE(s.misalignments.size() == 1);  // completed, but a barrier met someone's all-reduce
  CHECK(s.misalignments[0].labels[0].tag == 2);
  CHECK(s.misalignments[0].labels[1].tag == 1);
}

TEST_CASE("gloo: the rank with the smaller buffer aborts; its peers see the connection close") {
  const Setup e_setup = with(Backend::kGloo, 1800);
  Engine e(3, fixed_cost(1), e_setup.options);
  all_reduce(e, 0, 4);
  all_reduce(e, 1, 1024);
  all_reduce(e, 2, 1024);
  const RunSummary s = e.run();
  REQUIRE(s.crashes.size() == 3);
  CHECK(s.crashes[0].rank == 0);
  CHECK(s.crashes[0].message.find("op.preamble.length <= op.nbytes") != std::string::npos);
  CHECK(s.crashes[1].message.find("Connection closed by peer") != std::string::npos);
  CHECK_FALSE(s.watchdog_at.has_value());
}

TEST_CASE("gloo: a barrier facing an all-reduce waits on both sides") {
  const Setup e_setup = with(Backend::kGloo, 1800);
  Engine e(2, fixed_cost(1), e_setup.options);
  e.enqueue_collective(0, Engine::kWorld, {CollectiveKind::kBarrier, 0}, {2, 0});
  all_reduce(e, 1, 4);
  const RunSummary s = e.run();
  REQUIRE(s.watchdog_at.has_value());
  CHECK(*s.watchdog_at == Time::from_ms(1'800'000));
  CHECK(s.open.at(0).stalled);
}

TEST_CASE("a crashed rank never arrives: nccl peers wait for the watchdog, gloo peers fail") {
  for (Backend b : {Backend::kNccl, Backend::kGloo}) {
    const Setup e_setup = with(b, 600);
    Engine e(2, fixed_cost(1), e_setup.options);
    e.schedule_crash(1, ms(3), "killed");
    e.enqueue(1, StreamKind::kCompute, ms(10), {0, 0});
    all_reduce(e, 0, 64);
    const RunSummary s = e.run();
    CAPTURE(static_cast<int>(b));
    CHECK(s.crashes.front().rank == 1);
    CHECK(s.crashes.front().at == ms(3));
    if (b == Backend::kNccl) {
      CHECK(*s.watchdog_at == Time::from_ms(600'000));
    } else {
      REQUIRE(s.crashes.size() == 2);
      CHECK(s.crashes[1].rank == 0);
      CHECK(s.crashes[1].at == ms(3));
    }
  }
}

TEST_CASE("gloo: a rank arriving after a member died fails with it; the collective stays open") {
  const Setup e_setup = with(Backend::kGloo, 600);
  Engine e(3, fixed_cost(1), e_setup.options);
  all_reduce(e, 0, 64);  // ranks 0 and 1 wait from t = 0
  all_reduce(e, 1, 64);
  e.schedule_crash(1, ms(1), "killed");  // takes rank 0 with it
  e.enqueue(2, StreamKind::kCompute, ms(5), {0, 0});
  e.enqueue_collective(2, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0},
                       OpRef{Engine::stream_id(2, StreamKind::kCompute), 0});
  const RunSummary s = e.run();
  REQUIRE(s.crashes.size() == 3);
  CHECK(s.crashes[2].rank == 2);
  CHECK(s.crashes[2].at == ms(5));
  CHECK(s.crashes[2].message.find("Connection closed by peer (rank 0 exited)") != std::string::npos);
  // Every member reached it, but it never ran.
  REQUIRE(s.open.size() == 1);
  for (const MemberState& m : s.open.front().members) CHECK(m.arrived);
}

TEST_CASE("the watchdog stops the job at its deadline, even while other ranks still compute") {
  const Setup e_setup = with(Backend::kNccl, 1);
  Engine e(3, fixed_cost(1), e_setup.options);  // 1 s
  all_reduce(e, 0, 64);
  e.enqueue(1, StreamKind::kCompute, ms(5000), {0, 0});  // busy past the deadline
  const RunSummary s = e.run();
  REQUIRE(s.watchdog_at.has_value());
  CHECK(*s.watchdog_at == ms(1000));
  CHECK(s.end == ms(1000));
  bool running = false;
  for (const BlockedOp& b : s.blocked) running |= b.rank == 1 && b.running;
  CHECK(running);
  // A collective that completes in time disarms it.
  const Setup ok_setup = with(Backend::kNccl, 1);
  Engine ok(2, fixed_cost(1), ok_setup.options);
  all_reduce(ok, 0, 64);
  ok.enqueue(1, StreamKind::kCompute, ms(500), {0, 0});
  ok.enqueue_collective(1, Engine::kWorld, {CollectiveKind::kAllReduce, 64}, {1, 0},
                        OpRef{Engine::stream_id(1, StreamKind::kCompute), 0});
  CHECK_FALSE(ok.run().hung());
}


TEST_CASE("what each backend sends, and what every cost model prices") {
  const auto nccl = models::collective_library(Backend::kNccl);
  const auto gloo = models::collective_library(Backend::kGloo);
  const Collective barrier{CollectiveKind::kBarrier, 0};
  CHECK(nccl->as_sent(barrier).kind == CollectiveKind::kAllReduce);
  CHECK(nccl->as_sent(barrier).bytes == models::kBarrierBytes);
  CHECK(gloo->as_sent(barrier).kind == CollectiveKind::kBarrier);
  CHECK(gloo->as_sent(barrier).bytes == 0);
  CHECK(models::priced_as(barrier).kind == CollectiveKind::kAllReduce);
  CHECK(models::priced_as(barrier).bytes == models::kBarrierBytes);
  CHECK(models::priced_as({CollectiveKind::kBroadcast, 10}).bytes == 10);
  CHECK_FALSE(nccl->check_before(8));
  CHECK_FALSE(nccl->peer_died(3));
  CHECK(*gloo->peer_died(3) == "RuntimeError: [gloo] Connection closed by peer (rank 3 exited)");
}

TEST_CASE("TORCH_DISTRIBUTED_DEBUG=DETAIL: a fingerprint all-gather before each collective, all ranks fail at a mismatch") {
  const auto debug = models::collective_library(Backend::kNccl, 64);
  const std::optional<Collective> check = debug->check_before(8);
  REQUIRE(check);
  CHECK(check->kind == CollectiveKind::kAllGather);
  CHECK(check->bytes == 64 * 8);
  const Verdict v = debug->on_mismatch(7, {0, 1, 2}, {{CollectiveKind::kAllReduce, 4}, {CollectiveKind::kAllReduce, 4},
                                                      {CollectiveKind::kBroadcast, 4}});
  REQUIRE(v.kind == Verdict::kFails);
  REQUIRE(v.failures.size() == 3);
  CHECK(v.failures[1].rank == 1);
  CHECK(v.failures[1].message ==
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=7, OpType=all_reduce, TensorBytes=4), but Rank 2 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=7, OpType=broadcast, TensorBytes=4).");
  // A barrier against a 4-byte all-reduce differs in what each rank calls, though NCCL sends the same.
  CHECK(debug->on_mismatch(1, {0, 1}, {{CollectiveKind::kBarrier, 0}, {CollectiveKind::kAllReduce, 4}}).kind == Verdict::kFails);
  CHECK(models::collective_library(Backend::kNccl)->on_mismatch(1, {0, 1}, {{CollectiveKind::kBarrier, 0}, {CollectiveKind::kAllReduce, 4}}).kind ==
        Verdict::kRuns);
}

TEST_CASE("DETAIL: FSDP's forward-order check fails every rank when the all-gathered units differ") {
  const models::ContentReader reads = [](ddpsim::sim::OpLabel l) -> std::optional<std::string> {
    if (l.tag != 7) return std::nullopt;
    return "[unit " + std::to_string(l.index) + "]";
  };
  const auto debug = models::collective_library(Backend::kNccl, 64, reads);
  // The same kind and size from every rank (c10d's fingerprint passes): it runs...
  CHECK(debug->on_mismatch(5, {0, 1}, {{CollectiveKind::kAllGather, 8}, {CollectiveKind::kAllGather, 8}}).kind == Verdict::kRuns);
  // ...and the check reads different units: every rank fails.
  const std::optional<Verdict> v = debug->on_label_mismatch(5, {0, 1}, {ddpsim::sim::OpLabel{7, 0, 1}, ddpsim::sim::OpLabel{7, 0, 2}});
  REQUIRE(v);
  REQUIRE(v->kind == Verdict::kFails);
  REQUIRE(v->failures.size() == 2);
  CHECK(v->failures[1].rank == 1);
  CHECK(v->failures[0].message ==
        "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering parameters for [unit 1] while rank 1 "
        "is all-gathering parameters for [unit 2]");
  // Labels the check does not read, or no DETAIL: nothing is read.
  CHECK_FALSE(debug->on_label_mismatch(5, {0, 1}, {ddpsim::sim::OpLabel{8, 0, 1}, ddpsim::sim::OpLabel{8, 0, 2}}));
  CHECK_FALSE(models::collective_library(Backend::kNccl)->on_label_mismatch(5, {0, 1}, {ddpsim::sim::OpLabel{7, 0, 1}, ddpsim::sim::OpLabel{7, 0, 2}}));
}
