#include "models/fsdp.hpp"
#include "models/fsdp_program.hpp"
#include "models/replica_pricing.hpp"

#include <doctest/doctest.h>

using namespace ddpsim;
using models::FsdpUnit;
using models::Tensor;
using models::WrapPolicy;

namespace {

// emb 1000, blocks.0.fc 110, blocks.1.fc 110, head 100, norm 10 elements.
models::ModelSpec toy() {
  models::ModelSpec m;
  m.parameters = {Tensor{"emb.weight", {100, 10}}, Tensor{"blocks.0.fc.weight", {10, 10}}, Tensor{"blocks.0.fc.bias", {10}},
                  Tensor{"blocks.1.fc.weight", {10, 10}}, Tensor{"blocks.1.fc.bias", {10}}, Tensor{"head.weight", {10, 10}},
                  Tensor{"norm.weight", {10}}};
  return m;
}

std::vector<std::string> modules(const std::vector<FsdpUnit>& units) {
  std::vector<std::string> out;
  for (const FsdpUnit& u : units) out.push_back(u.root ? "<root>" : u.module);
  return out;
}

}  // namespace

TEST_CASE("FSDP units: size-based policy wraps as _recursive_wrap does") {
  SUBCASE("each block's linear reaches min_num_params; the remainder goes to the root") {
    const auto units = models::build_units(toy(), WrapPolicy{110, {}});
    CHECK(modules(units) == std::vector<std::string>{"emb", "blocks.0.fc", "blocks.1.fc", "<root>"});
    CHECK(units[3].numel == 110);
    CHECK(units[3].params == std::vector<int>{5, 6});
    CHECK(units[1].params == std::vector<int>{1, 2});
    CHECK(units[1].parent == 3);
    CHECK(models::forward_order(units) == std::vector<int>{3, 0, 1, 2});
  }
  SUBCASE("one more parameter needed: the blocks container takes both blocks") {
    const auto units = models::build_units(toy(), WrapPolicy{111, {}});
    CHECK(modules(units) == std::vector<std::string>{"emb", "blocks", "<root>"});
    CHECK(units[1].numel == 220);
  }
  SUBCASE("no policy: the root holds every parameter") {
    const auto units = models::build_units(toy(), WrapPolicy{});
    REQUIRE(units.size() == 1);
    CHECK(units[0].root);
    CHECK(units[0].numel == 1330);
  }
}

TEST_CASE("FSDP units: module policy and nesting") {
  SUBCASE("blocks.* wraps each block") {
    const auto units = models::build_units(toy(), WrapPolicy{std::nullopt, {"blocks.*"}});
    CHECK(modules(units) == std::vector<std::string>{"blocks.0", "blocks.1", "<root>"});
    CHECK(units[2].params == std::vector<int>{0, 5, 6});
  }
  SUBCASE("a unit inside a unit: the inner one is built first, its parent is the outer") {
    const auto units = models::build_units(toy(), WrapPolicy{std::nullopt, {"blocks", "blocks.0.fc"}});
    CHECK(modules(units) == std::vector<std::string>{"blocks.0.fc", "blocks", "<root>"});
    CHECK(units[0].parent == 1);
    CHECK(units[1].parent == 2);
    CHECK(units[1].params == std::vector<int>{3, 4});
    CHECK(models::forward_order(units) == std::vector<int>{2, 1, 0});
  }
  SUBCASE("a wrapped module whose parameters its children took has no unit") {
    const auto units = models::build_units(toy(), WrapPolicy{std::nullopt, {"blocks", "blocks.*"}});
    CHECK(modules(units) == std::vector<std::string>{"blocks.0", "blocks.1", "<root>"});
  }
  SUBCASE("patterns match whole components") {
    CHECK(models::module_matches("blocks.*", "blocks.0"));
    CHECK_FALSE(models::module_matches("blocks.*", "blocks"));
    CHECK_FALSE(models::module_matches("blocks.*", "blocks.0.fc"));
    CHECK_FALSE(models::module_matches("block", "blocks"));
    CHECK(models::module_matches("*", "emb"));
  }
}

TEST_CASE("FSDP padding and shard groups") {
  CHECK(models::padded_numel(110, 8) == 112);
  CHECK(models::padded_numel(112, 8) == 112);
  CHECK(models::padded_numel(3, 8) == 8);
  CHECK(models::shard_group_size(models::ShardingStrategy::kFullShard, 16, 8) == 16);
  CHECK(models::shard_group_size(models::ShardingStrategy::kHybridShard, 16, 8) == 8);
  CHECK(models::shard_group_size(models::ShardingStrategy::kNoShard, 16, 8) == 1);
  CHECK(models::parse_sharding_strategy("_HYBRID_SHARD_ZERO2") == models::ShardingStrategy::kHybridShardZero2);
  CHECK_FALSE(models::parse_sharding_strategy("full_shard"));
}

TEST_CASE("replica groups in flight share a node's NICs: each gets min(1, nics / in flight) of one") {
  // 2 nodes of 8 GPUs, 4 NICs of 25 GB/s a node, no latency: a 1 GiB
  // all-reduce over the 2 nodes moves 1 GiB across each NIC it uses.
  models::DdpJob job;
  models::ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.nics_per_node = 4;
  c.intra.bandwidth_GBps = 150;
  c.inter.bandwidth_GBps = 25;
  job.cluster = c;
  const sim::Collective ar{sim::CollectiveKind::kAllReduce, std::int64_t{1} << 30};
  const auto time = [&](int in_flight) { return models::replica_timer(job, 2, in_flight)->time(ar, 2, {}); };
  CHECK(time(1) == sim::Time::ns(std::llround((1 << 30) / 25.0)));  // a whole NIC
  CHECK(time(4) == time(1));                                         // a NIC each
  CHECK(time(8) == sim::Time::ns(std::llround((1 << 30) / 12.5)));  // half of one
  CHECK(time(8) == models::replica_timer(job, 2)->time(ar, 2, {}));  // every GPU of the node: the default
  CHECK_THROWS_AS(models::replica_timer(job, 2, 0), std::invalid_argument);

  // ReplicaPricing (the analytic engine): the count in flight decides.
  const std::vector<std::vector<int>> replicas = models::replica_groups(16, 8);
  models::ReplicaPricing pricing(job, replicas, nullptr);
  const auto running = [&ar](std::vector<int> groups) {
    std::vector<sim::InFlight> v;
    for (int g : groups) v.push_back({g, ar});
    return v;
  };
  CHECK(pricing.time(ar, 3, running({3})) == time(1));
  CHECK(pricing.time(ar, 3, running({0, 1, 2, 3, 4, 5, 6, 7})) == time(8));
  CHECK_THROWS_AS(pricing.time(ar, 3, running({0, 1})), std::logic_error);

  // A slow link on rank 11 (node 1 of replica group 3, {3, 11}) slows that
  // group's all-reduces, at its position in the group, and no other's.
  job.faults = {{{11}, models::fault::SlowLink{2.0, std::nullopt}}};
  models::ReplicaPricing around_slow(job, replicas, nullptr);
  CHECK(around_slow.time(ar, 3, running({3})) == models::replica_timer(job, 2, 1)->time(ar, 2, {{1, 2.0}}));
  CHECK(around_slow.time(ar, 3, running({3})) > time(1));
  CHECK(around_slow.time(ar, 2, running({2})) == time(1));
}

namespace {
// A timer that runs groups together by recording what it was asked: each
// group's time is its collective's bytes in microseconds.
class RecordingTimer final : public models::CollectiveTimer {
 public:
  std::string_view engine() const override { return "simgrid"; }
  sim::Time time(const sim::Collective& c, int, const std::vector<models::SlowLink>&) override {
    return sim::Time::from_us(static_cast<double>(c.bytes));
  }
  std::vector<sim::Time> time_together(const std::vector<models::GroupCall>& calls,
                                       const std::vector<models::SlowLink>& slow) override {
    asked.push_back(calls);
    slowed.push_back(slow);
    std::vector<sim::Time> out;
    for (const models::GroupCall& g : calls) out.push_back(sim::Time::from_us(static_cast<double>(g.collective.bytes)));
    return out;
  }
  using CollectiveTimer::time_together;
  std::vector<std::vector<models::GroupCall>> asked;
  std::vector<std::vector<models::SlowLink>> slowed;
};
}  // namespace

TEST_CASE("groups priced together on SimGrid: each group in flight runs its own collective") {
  // A shard group (a node) reduce-scattering and a replica group
  // all-reducing at once, as hybrid sharding does on PCIe nodes.
  models::DdpJob job;
  RecordingTimer timer;
  const std::vector<std::vector<int>> groups = {{0, 1, 2, 3}, {0, 4}};
  models::ReplicaPricing pricing(job, groups, &timer);
  const sim::Collective rs{sim::CollectiveKind::kReduceScatter, 4096}, ar{sim::CollectiveKind::kAllReduce, 512};
  const std::vector<sim::InFlight> both = {{0, rs}, {1, ar}};
  CHECK(pricing.time(ar, 1, both) == sim::Time::from_us(512));
  CHECK(pricing.time(rs, 0, both) == sim::Time::from_us(4096));  // the same set: answered from the first
  REQUIRE(timer.asked.size() == 1);
  const std::vector<models::GroupCall>& calls = timer.asked.front();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].collective == rs);
  CHECK(calls[0].ranks == groups[0]);
  CHECK(calls[1].collective == ar);
  CHECK(calls[1].ranks == groups[1]);
  // The replica group's next bucket beside the same reduce-scatter: a new set.
  const sim::Collective next{sim::CollectiveKind::kAllReduce, 1024};
  CHECK(pricing.time(next, 1, {{0, rs}, {1, next}}) == sim::Time::from_us(1024));
  CHECK(timer.asked.size() == 2);
  CHECK(timer.slowed.back().empty());
  // A slow link: the platform's links of the rank (its global number) slowed meanwhile.
  job.faults = {{{4}, models::fault::SlowLink{3.0, std::nullopt}}};
  models::ReplicaPricing slowed(job, groups, &timer);
  CHECK(slowed.time(ar, 1, both) == sim::Time::from_us(512));
  REQUIRE(timer.slowed.size() == 3);
  REQUIRE(timer.slowed.back().size() == 1);
  CHECK(timer.slowed.back().front().rank == 4);
  CHECK(timer.slowed.back().front().factor == 3.0);
}
