// ddpsim advise on scenarios whose answer is known before the search
// (tests/advise/*.yaml; docs/advise.md).

#include <doctest/doctest.h>

#include <algorithm>

#include "advise/advise_report.hpp"
#include "advise/advisor.hpp"
#include "loader/input_error.hpp"

using namespace ddpsim;
using advisor::AdviseOptions;
using advisor::Configuration;
using advisor::Evaluated;

namespace {

std::string fixture(const char* name) { return std::string(DDPSIM_SOURCE_DIR) + "/tests/advise/" + name; }

bool mentions(const std::vector<std::string>& reasons, const std::string& what) {
  return std::any_of(reasons.begin(), reasons.end(), [&](const std::string& r) { return r.find(what) != std::string::npos; });
}

}  // namespace

TEST_CASE("a model too big for DDP's memory goes to FSDP, and the advice says by how much DDP is over") {
  const advisor::Advice a = advisor::advise(fixture("too_big_for_ddp.yaml"), {});
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(a.ranked.front().config.fsdp());
  for (const Evaluated& e : a.ranked) CHECK(e.config.fsdp());  // no DDP configuration fits
  const auto ddp_dropped = std::count_if(a.dropped.begin(), a.dropped.end(), [](const Evaluated& e) {
    return !e.config.fsdp() && !e.fits;
  });
  CHECK(ddp_dropped == 50);  // 5 caps x 5 comm hooks, with and without activation checkpointing
  REQUIRE_FALSE(a.reasons.empty());
  CHECK(a.reasons[0].find("DDP needs 40.5 GiB per GPU at W=8") != std::string::npos);
  CHECK(a.reasons[0].find("40.0 GiB available") != std::string::npos);
}

TEST_CASE("a small model on a fast network stays on DDP") {
  const advisor::Advice a = advisor::advise(fixture("small_model_fast_network.yaml"), {});
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(a.ranked.front().config.program == "DDP");
  CHECK(a.dropped.empty());
  CHECK(mentions(a.reasons, "DDP over FSDP"));
}

TEST_CASE("a near tie keeps the scenario's settings, and says so") {
  // BERT-base on one NVSwitch node: cap 1 is 0.0 % faster than the scenario's 25.
  const advisor::Advice a = advisor::advise(fixture("bert_one_node.yaml"), {});
  REQUIRE_FALSE(a.ranked.empty());
  const Configuration& c = a.ranked.front().config;
  CHECK(c.program == "DDP");
  CHECK(c.bucket_cap_mb == 25);
  CHECK(c.comm_hook == "allreduce");
  REQUIRE_FALSE(a.reasons.empty());
  CHECK(a.reasons[0].find("kept: DDP cap 1, accum 1, W=8 is 0.0 % better throughput, a near tie") != std::string::npos);
  CHECK(a.reasons[0].find("it keeps more of the scenario's settings") != std::string::npos);
  CHECK_FALSE(mentions(a.reasons, "rather than the scenario's 25"));
}

TEST_CASE("within a near tie: the scenario's settings, then PyTorch's defaults, then the simpler program") {
  const Configuration scenario{"DDP", 5, "allreduce", 1, 8, false, std::nullopt};
  const auto cost = [&](Configuration c) { return advisor::change_cost(c, scenario); };
  const Configuration same = scenario;
  Configuration cap25 = scenario, hooked = scenario, fsdp = scenario, cap50 = scenario;
  cap25.bucket_cap_mb = 25;
  cap50.bucket_cap_mb = 50;
  hooked.comm_hook = "fp16_compress";
  fsdp.program = "FULL_SHARD";
  CHECK(cost(same) < cost(cap25));   // the scenario's own cap first
  CHECK(cost(cap25) < cost(cap50));  // then PyTorch's default cap: one change either way
  CHECK(cost(cap50) < cost(hooked)); // then no hook over a hook (one change each, a hook is not a default)
  CHECK(cost(cap25) < cost(fsdp));   // and DDP over FSDP
  Configuration world = scenario;
  world.world_size = 64;
  CHECK(cost(world) == cost(same));  // the world size is the question, not a setting
}

TEST_CASE("a slower configuration is never put first unless it keeps the user's own settings") {
  // The case that was wrong: FULL_SHARD (one change, the program) at 2,826.6 samples/s ranked above
  // two DDP rows at 2,832.8 (a bucket cap and a hook: two changes).
  advisor::Advice a;
  a.objective = advisor::Objective::kThroughput;
  a.scenario_config = Configuration{"DDP", 25, "allreduce", 1, 8, false, std::nullopt};
  const auto row = [](Configuration c, double samples) {
    advisor::Evaluated e;
    e.config = std::move(c);
    e.objective = samples;
    e.step_ms = 1;
    return e;
  };
  a.ranked = {row({"DDP", 50, "fp16_compress", 1, 8, false, std::nullopt}, 2832.8),
              row({"DDP", 1, "fp16_compress", 1, 8, false, std::nullopt}, 2832.8),
              row({"FULL_SHARD", 25, "allreduce", 1, 8, false, std::nullopt}, 2826.6)};
  advisor::order_near_tie(a);
  CHECK(a.ranked.front().config.program == "DDP");
  CHECK(a.ranked.front().config.bucket_cap_mb == 50);
  CHECK(a.near_tie.empty());
  // The user's own configuration, 0.2 % slower, goes first and says why.
  a.ranked.push_back(row(a.scenario_config, 2827.0));
  std::stable_sort(a.ranked.begin(), a.ranked.end(), [](const auto& x, const auto& y) { return x.objective > y.objective; });
  advisor::order_near_tie(a);
  CHECK(a.ranked.front().config.program == "DDP");
  CHECK(a.ranked.front().config.comm_hook == "allreduce");
  CHECK(a.near_tie.find("it keeps more of the scenario's settings") != std::string::npos);
  // Between equal objectives, the one asking less (a cap of 25 over a cap of 1 with the same hook).
  advisor::Advice b = a;
  b.scenario_config = Configuration{"DDP", 5, "fp16_compress", 1, 8, false, std::nullopt};
  b.near_tie.clear();
  b.ranked = {row({"DDP", 1, "fp16_compress", 1, 8, false, std::nullopt}, 2832.8),
              row({"DDP", 25, "fp16_compress", 1, 8, false, std::nullopt}, 2832.8)};
  advisor::order_near_tie(b);
  CHECK(b.ranked.front().config.bucket_cap_mb == 25);
}

TEST_CASE("on a slow network a comm hook wins, and the advice says what it buys") {
  const advisor::Advice a = advisor::advise(fixture("slow_network_small_buckets.yaml"), {});
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(mentions(a.axes, "comm hook (DDP): allreduce, fp16_compress, bf16_compress, powerSGD r1, powerSGD r4"));
  const Configuration& c = a.ranked.front().config;
  CHECK(c.comm_hook != "allreduce");
  CHECK(mentions(a.reasons, c.comm_hook + ": "));
  CHECK(mentions(a.reasons, "% less exposed communication"));
}

TEST_CASE("on gloo: the scenario's own hook kept in the search, no bf16 and no other PowerSGD, and why") {
  AdviseOptions o;
  o.programs = {"DDP"};
  const advisor::Advice a = advisor::advise(std::string(DDPSIM_SOURCE_DIR) + "/scenarios/comm_hook_powersgd.yaml", o);
  CHECK(mentions(a.axes, "comm hook (DDP): powerSGD r4, allreduce, fp16_compress (rates"));
  CHECK(mentions(a.axes, "no PowerSGD and no bf16_compress on gloo"));
  CHECK(a.scenario_config.comm_hook == "powerSGD r4");
  for (const Evaluated& e : a.ranked) CHECK(e.config.comm_hook != "bf16_compress");
}

TEST_CASE("a slow network with small buckets moves the cap up") {
  AdviseOptions o;
  o.programs = {"DDP"};
  const advisor::Advice a = advisor::advise(fixture("slow_network_small_buckets.yaml"), o);
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(a.scenario_cap_mb == 1);
  CHECK(a.ranked.front().config.bucket_cap_mb > 1);
  CHECK(a.ranked.back().config.bucket_cap_mb == 1);  // the scenario's own cap is the worst
  CHECK(mentions(a.reasons, "rather than the scenario's 1"));
  // With every program open the best DDP configuration still moves the cap up.
  const advisor::Advice all = advisor::advise(fixture("slow_network_small_buckets.yaml"), {});
  const auto best_ddp = std::find_if(all.ranked.begin(), all.ranked.end(), [](const Evaluated& e) { return !e.config.fsdp(); });
  REQUIRE(best_ddp != all.ranked.end());
  CHECK(best_ddp->config.bucket_cap_mb > 1);
}

TEST_CASE("gradient accumulation wins where the network is the bottleneck and the batch range allows it") {
  AdviseOptions o;
  o.global_batch_min = 256;
  o.global_batch_max = 2048;
  const advisor::Advice a = advisor::advise(fixture("network_bound_accumulation.yaml"), o);
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(a.ranked.front().config.accumulation > 1);
  CHECK(mentions(a.reasons, "gradient accumulation"));
  for (const Evaluated& e : a.ranked) {
    CHECK(e.global_batch >= 256);
    CHECK(e.global_batch <= 2048);
  }
  // Without a batch range the scenario's accumulation (1) is the only one.
  const advisor::Advice fixed = advisor::advise(fixture("network_bound_accumulation.yaml"), {});
  for (const Evaluated& e : fixed.ranked) CHECK(e.config.accumulation == 1);
}

TEST_CASE("the advice is the same at any thread count, byte for byte") {
  AdviseOptions one, two;
  two.threads = 2;
  one.global_batch_min = two.global_batch_min = 256;
  one.global_batch_max = two.global_batch_max = 1024;
  const std::string path = fixture("network_bound_accumulation.yaml");
  CHECK(advisor::to_json(advisor::advise(path, one)).dump() == advisor::to_json(advisor::advise(path, two)).dump());
}

TEST_CASE("goodput: each configuration's checkpoint interval is the scenario's or Daly's, whichever leaves more") {
  AdviseOptions o;
  o.objective = advisor::Objective::kGoodput;
  o.programs = {"DDP"};
  const advisor::Advice a = advisor::advise(std::string(DDPSIM_SOURCE_DIR) + "/scenarios/restart_8gpu.yaml", o);
  REQUIRE_FALSE(a.ranked.empty());
  for (const Evaluated& e : a.ranked) {
    REQUIRE(e.goodput);
    CHECK(*e.goodput > 0);
    CHECK(*e.goodput < 1);
    CHECK(e.config.checkpoint_interval_min);
    CHECK(e.objective == doctest::Approx(e.samples_per_s * *e.goodput));
  }
}

TEST_CASE("advise refuses what it cannot do, at the option") {
  AdviseOptions goodput;
  goodput.objective = advisor::Objective::kGoodput;
  CHECK_THROWS_AS(advisor::advise(fixture("small_model_fast_network.yaml"), goodput), scenarios::InputError);
  AdviseOptions unknown;
  unknown.programs = {"ZERO3"};
  CHECK_THROWS_AS(advisor::advise(fixture("small_model_fast_network.yaml"), unknown), scenarios::InputError);
  AdviseOptions hybrid_one_node;
  hybrid_one_node.programs = {"HYBRID_SHARD"};
  CHECK_THROWS_AS(advisor::advise(fixture("small_model_fast_network.yaml"), hybrid_one_node), scenarios::InputError);
  AdviseOptions unreachable;
  unreachable.global_batch_min = 1;
  unreachable.global_batch_max = 100;  // local batch 32 on 8 ranks is 256 at least
  CHECK_THROWS_AS(advisor::advise(fixture("small_model_fast_network.yaml"), unreachable), scenarios::InputError);
}

TEST_CASE("the search split over 3 processes gathers to the advice of one, byte for byte") {
  AdviseOptions o;
  o.global_batch_min = 256;
  o.global_batch_max = 2048;
  const std::string path = fixture("network_bound_accumulation.yaml");
  const std::string one = advisor::to_json(advisor::advise(path, o)).dump();
  std::vector<std::string> shares(3);
  for (int index : {1, 2}) {  // the other processes hand their share to the gather and report nothing
    AdviseOptions p = o;
    p.partition = {index, 3, [&, index](const std::string& mine) {
                     shares[static_cast<std::size_t>(index)] = mine;
                     return std::vector<std::string>{};
                   }};
    CHECK_FALSE(advisor::advise(path, p).complete);
  }
  AdviseOptions first = o;
  first.partition = {0, 3, [&](const std::string& mine) {
                       shares[0] = mine;
                       return shares;
                     }};
  const advisor::Advice gathered = advisor::advise(path, first);
  CHECK(gathered.complete);
  CHECK(advisor::to_json(gathered).dump() == one);
  CHECK(shares[1] != "[]");  // each process did a share
  CHECK(shares[2] != "[]");
}

TEST_CASE("a program the scenario refuses is left out, and said so") {
  const advisor::Advice a = advisor::advise(std::string(DDPSIM_SOURCE_DIR) + "/scenarios/jitter_stragglers.yaml", {});
  CHECK(mentions(a.axes, "FULL_SHARD: left out, the scenario refuses it: key 'straggler.model'"));
  for (const Evaluated& e : a.ranked) CHECK(e.config.program == "DDP");
}
