#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "loader/input_error.hpp"
#include "loader/calibration_file.hpp"
#include "loader/scenario.hpp"
#include "loader/test_scenarios.hpp"
#include "sim/digest.hpp"

using namespace ddpsim;
using scenarios::InputError;
using scenarios::parse_scenario;
using scenarios::testing::error_of;
using scenarios::testing::replace;

namespace {

const std::string kValid = R"(name: t
seed: 7
world_size: [1, 2]
training:
  iterations: 4
model:
  forward_ms: 1
  backward_ms: 2
  gradient_bytes: 1000
collective:
  latency_us: 5
  bandwidth_GBps: 10
)";

}  // namespace

TEST_CASE("a valid scenario loads with documented defaults") {
  const auto s = parse_scenario(kValid, "dir/s.yaml");
  CHECK(s.name == "t");
  CHECK(s.seed == 7);
  CHECK(s.sweep.world_sizes == std::vector<int>{1, 2});
  CHECK(s.job.iterations == 4);
  CHECK(s.job.local_batch_size == 32);
  CHECK(s.job.model.forward_total() == sim::Time::from_ms(1));
  CHECK(s.job.model.optimizer == sim::Time::zero());
  CHECK(s.job.warmup_iterations == 2);
  CHECK(s.job.network.latency == sim::Time::from_us(5));
  CHECK(s.job.network.launch_overhead == sim::Time::zero());
  CHECK(std::holds_alternative<models::NoStraggler>(s.job.straggler));
  const auto unnamed = parse_scenario(replace(kValid, "name: t\n", ""), "dir/my_run.yaml");
  CHECK(unnamed.name == "my_run");
  const auto single = parse_scenario(replace(kValid, "[1, 2]", "8"), "s.yaml");
  CHECK(single.sweep.world_sizes == std::vector<int>{8});
}

TEST_CASE("straggler forms load") {
  const auto log2 = parse_scenario(kValid + "straggler:\n  model: log2\n  penalty_ms: 4.9\n", "s.yaml");
  const auto& l = std::get<models::Log2Straggler>(log2.job.straggler);
  CHECK(l.penalty == sim::Time::from_ms(4.9));
  CHECK(l.rank == -1);
  const auto jit = parse_scenario(kValid + "straggler:\n  model: jitter\n  mean_ms: 2\n", "s.yaml");
  CHECK(std::get<models::JitterStraggler>(jit.job.straggler).mean == sim::Time::from_ms(2));
  const auto uni =
      parse_scenario(kValid + "straggler:\n  model: jitter\n  distribution: uniform\n  max_ms: 3\n", "s.yaml");
  CHECK(std::get<models::JitterStraggler>(uni.job.straggler).distribution == models::JitterDistribution::kUniform);
}

// kValid's network as a two-node cluster section instead of collective latency and bandwidth.
const std::string kCluster = kValid.substr(0, kValid.find("collective:")) + R"(cluster:
  nodes: 2
  gpus_per_node: 4
  intra: {topology: star, bandwidth_GBps: 100, latency_us: 2}
  nics_per_node: 2
  inter: {topology: fat_tree, bandwidth_GBps: 25, latency_us: 5, nodes_per_switch: 1, oversubscription: 2}
collective:
  algorithm: hierarchical
)";

TEST_CASE("cluster, engine and simgrid sections load") {
  const auto s = parse_scenario(
      kCluster + "engine: simgrid\nsimgrid:\n  config:\n    network/model: LV08\n    network/TCP-gamma: 4194304\n"
                 "    network/crosstraffic: true\n",
      "s.yaml");
  REQUIRE(s.job.cluster);
  const models::ClusterSpec& c = *s.job.cluster;
  CHECK(c.nodes == 2);
  CHECK(c.gpus_per_node == 4);
  CHECK(c.nics_per_node == 2);
  CHECK(c.intra.topology == models::Fabric::Topology::kStar);
  CHECK(c.intra.latency == sim::Time::from_us(2));
  CHECK(c.inter.topology == models::Fabric::Topology::kFatTree);
  CHECK(c.inter.bandwidth_GBps == 25);
  CHECK(c.inter.nodes_per_switch == 1);
  CHECK(c.inter.oversubscription == 2);
  CHECK(c.inter.full_duplex);
  CHECK(s.job.algorithm == models::Algorithm::kHierarchical);
  CHECK(s.engine == "simgrid");
  using Setting = std::pair<std::string, std::string>;
  CHECK(s.simgrid.config ==
        std::vector<Setting>{{"network/model", "LV08"}, {"network/TCP-gamma", "4194304"}, {"network/crosstraffic", "1"}});
  CHECK(parse_scenario(kValid, "s.yaml").engine == "analytic");
  CHECK_FALSE(parse_scenario(kValid, "s.yaml").job.cluster);
}

TEST_CASE("algorithm auto loads") {
  const auto automatic = replace(kCluster, "algorithm: hierarchical", "algorithm: auto");
  CHECK(parse_scenario(automatic, "s.yaml").job.algorithm == models::Algorithm::kAuto);
  CHECK(error_of(replace(kCluster, "algorithm: hierarchical", "algorithm: tree"))
            .find("key 'collective.algorithm': value 'tree': expected one of: ring, hierarchical, auto, binomial") !=
        std::string::npos);
}

TEST_CASE("algorithm binomial loads, on either engine") {
  const auto binomial = replace(kCluster, "algorithm: hierarchical", "algorithm: binomial");
  CHECK(parse_scenario(binomial, "s.yaml").job.algorithm == models::Algorithm::kBinomial);
  CHECK(parse_scenario(binomial + "engine: simgrid\n", "s.yaml").job.algorithm == models::Algorithm::kBinomial);
}

TEST_CASE("cluster sections that cannot describe a machine are refused") {
  CHECK(error_of(replace(kCluster, "[1, 2]", "[1, 16]")).find("s.yaml:3:17: key 'world_size': value '16': expected at most 8 ranks: "
                                                              "the cluster has 2 nodes x 4 GPUs") != std::string::npos);
  CHECK(error_of(replace(kCluster, "algorithm: hierarchical", "latency_us: 3"))
            .find("key 'collective.latency_us': the cluster section gives every route's latency") != std::string::npos);
  CHECK(error_of(replace(kCluster, " nodes_per_switch: 1,", "")).find("key 'cluster.inter.nodes_per_switch': missing") !=
        std::string::npos);
  CHECK(error_of(replace(kCluster, "oversubscription: 2", "oversubscription: 0.5"))
            .find("key 'cluster.inter.oversubscription': value '0.5'") != std::string::npos);
  CHECK(error_of(replace(kCluster, "topology: star,", "topology: torus,"))
            .find("key 'cluster.intra.topology': value 'torus': expected one of: star, ring") != std::string::npos);
  CHECK(error_of(replace(kCluster, "topology: star,", "topology: star, nodes_per_switch: 2,"))
            .find("key 'cluster.intra.nodes_per_switch'") != std::string::npos);
  CHECK(error_of(replace(kCluster, "nics_per_node: 2", "nics_per_node: 5"))
            .find("key 'cluster.nics_per_node': value '5': expected an integer from 1 to 4") != std::string::npos);
  CHECK(error_of(replace(kCluster, "  inter: {topology: fat_tree, bandwidth_GBps: 25, latency_us: 5, nodes_per_switch: 1, "
                                   "oversubscription: 2}\n", ""))
            .find("key 'cluster.inter': missing") != std::string::npos);
  // CollNet (the switches reduce): only the inter-node network, only with NCCL's model.
  CHECK(error_of(replace(kCluster, "oversubscription: 2}", "oversubscription: 2, collnet: true}"))
            .find("key 'cluster.inter.collnet': value 'true': expected false with collective.model ring") != std::string::npos);
  CHECK(error_of(replace(kCluster, "latency_us: 2}", "latency_us: 2, collnet: true}"))
            .find("key 'cluster.intra.collnet'") != std::string::npos);
  CHECK(error_of(replace(kCluster, "oversubscription: 2}", "oversubscription: 2, collnet: 3}"))
            .find("key 'cluster.inter.collnet'") != std::string::npos);
  CHECK(error_of(replace(kCluster, "latency_us: 2}", "latency_us: 2, duplex: simplex}"))
            .find("key 'cluster.intra.duplex': value 'simplex': expected one of: full, half") != std::string::npos);
  CHECK(error_of(kCluster + "simgrid:\n  config:\n    network/model: bogus\n")
            .find("key 'simgrid.config.network/model': value 'bogus': expected one of: CM02, LV08") != std::string::npos);
  CHECK(error_of(kCluster + "simgrid:\n  config:\n    network/TCP-gamma: abc\n")
            .find("key 'simgrid.config.network/TCP-gamma': value 'abc'") != std::string::npos);
  CHECK(error_of(kCluster + "simgrid:\n  config:\n    network/crosstraffic: maybe\n")
            .find("key 'simgrid.config.network/crosstraffic': value 'maybe'") != std::string::npos);
  CHECK(error_of(kCluster + "simgrid:\n  config:\n    network/modle: LV08\n")
            .find("key 'simgrid.config.network/modle': unknown key (did you mean 'network/model'?)") != std::string::npos);
}

TEST_CASE("unknown and duplicate keys are located InputErrors, with what is allowed") {
  SUBCASE("unknown top-level key, with a suggestion") {
    const auto e = error_of(kValid + "trainig:\n  iterations: 3\n");
    CHECK(e.find("s.yaml:13:1: key 'trainig': unknown key (did you mean 'training'?)") == 0);
  }
  SUBCASE("unknown nested key, with a suggestion") {
    const auto e = error_of(replace(kValid, "forward_ms", "forwrd_ms"));
    CHECK(e.find("s.yaml:7:3: key 'model.forwrd_ms': unknown key (did you mean 'forward_ms'?)") == 0);
  }
  SUBCASE("unknown key far from any known one lists what is allowed") {
    const auto e = error_of(kValid + "zzz: 1\n");
    CHECK(e.find("unknown key; allowed here: name, description") != std::string::npos);
  }
  SUBCASE("duplicate key") {
    const auto e = error_of(replace(kValid, "  backward_ms: 2\n", "  backward_ms: 2\n  backward_ms: 3\n"));
    CHECK(e.find("s.yaml:9:3: key 'model.backward_ms': duplicate key (first given at line 8)") == 0);
  }
}

TEST_CASE("invalid values are located InputErrors: types, ranges, NaN, limits") {
  SUBCASE("wrong type: text for a number") {
    const auto e = error_of(replace(kValid, "iterations: 4", "iterations: four"));
    CHECK(e.find("s.yaml:5:15: key 'training.iterations': value 'four': expected an integer from 1") == 0);
  }
  SUBCASE("wrong type: a quoted number is a string") {
    CHECK(error_of(replace(kValid, "forward_ms: 1", "forward_ms: \"1\"")).find("key 'model.forward_ms'") !=
          std::string::npos);
  }
  SUBCASE("wrong type: a list for a number") {
    CHECK(error_of(replace(kValid, "forward_ms: 1", "forward_ms: [1]")).find("value (a sequence)") !=
          std::string::npos);
  }
  SUBCASE("wrong type: a section that is not a mapping") {
    CHECK(error_of(replace(kValid, "training:\n  iterations: 4\n", "training: 4\n"))
              .find("key 'training': value '4': expected a mapping") != std::string::npos);
  }
  SUBCASE("a fraction for an integer") {
    CHECK(error_of(replace(kValid, "gradient_bytes: 1000", "gradient_bytes: 10.5")).find("expected an integer") !=
          std::string::npos);
  }
  SUBCASE("NaN") {
    const auto e = error_of(replace(kValid, "forward_ms: 1", "forward_ms: .nan"));
    CHECK(e.find("s.yaml:7:15: key 'model.forward_ms': value '.nan': expected a finite number >= 0") == 0);
  }
  SUBCASE("infinity") {
    CHECK(error_of(replace(kValid, "bandwidth_GBps: 10", "bandwidth_GBps: .inf")).find("expected a finite number") !=
          std::string::npos);
  }
  SUBCASE("negative time") {
    CHECK(error_of(replace(kValid, "backward_ms: 2", "backward_ms: -2")).find("value '-2': expected a finite number >= 0") !=
          std::string::npos);
  }
  SUBCASE("zero gradient size") {
    CHECK(error_of(replace(kValid, "gradient_bytes: 1000", "gradient_bytes: 0")).find("key 'model.gradient_bytes'") !=
          std::string::npos);
  }
  SUBCASE("zero bandwidth") {
    CHECK(error_of(replace(kValid, "bandwidth_GBps: 10", "bandwidth_GBps: 0")).find("expected a finite number > 0") !=
          std::string::npos);
  }
  SUBCASE("zero world size") {
    CHECK(error_of(replace(kValid, "[1, 2]", "[1, 0]")).find("s.yaml:3:17: key 'world_size': value '0'") == 0);
  }
  SUBCASE("empty world-size list") {
    CHECK(error_of(replace(kValid, "[1, 2]", "[]")).find("key 'world_size'") != std::string::npos);
  }
  SUBCASE("repeated world size") {
    CHECK(error_of(replace(kValid, "[1, 2]", "[2, 2]")).find("expected no repeated values") != std::string::npos);
  }
  SUBCASE("world size past the limit") {
    CHECK(error_of(replace(kValid, "[1, 2]", "99999999999999999999")).find("key 'world_size'") != std::string::npos);
  }
}

TEST_CASE("missing keys, keys that do not apply and malformed documents are located InputErrors") {
  SUBCASE("missing required key") {
    const auto e = error_of(replace(kValid, "world_size: [1, 2]\n", ""));
    CHECK(e.find("s.yaml:1:1: key 'world_size': missing; expected an integer") == 0);
  }
  SUBCASE("missing required nested key") {
    const auto e = error_of(replace(kValid, "  latency_us: 5\n", ""));
    CHECK(e.find("s.yaml:10:1: key 'collective.latency_us': missing") == 0);
  }
  SUBCASE("warm-up leaving nothing to measure") {
    CHECK(error_of(replace(kValid, "iterations: 4", "iterations: 4\n  warmup_iterations: 4"))
              .find("key 'training.warmup_iterations': value '4': expected an integer from 0 to 3") != std::string::npos);
  }
  SUBCASE("unsupported engine") {
    CHECK(error_of(kValid + "engine: ns3\n").find("key 'engine': value 'ns3': expected one of: analytic, simgrid") !=
          std::string::npos);
  }
  SUBCASE("straggler key of another form") {
    CHECK(error_of(kValid + "straggler:\n  model: log2\n  penalty_ms: 1\n  mean_ms: 2\n")
              .find("key 'straggler.mean_ms': does not apply to straggler model 'log2'") != std::string::npos);
  }
  SUBCASE("straggler rank outside the smallest world") {
    CHECK(error_of(kValid + "straggler:\n  model: log2\n  penalty_ms: 1\n  rank: 1\n")
              .find("expected an integer from -1 to 0") != std::string::npos);
  }
  SUBCASE("syntax error") {
    const auto e = error_of("world_size: [1, 2\nmodel: {\n");
    CHECK(e.find("s.yaml:") == 0);
    CHECK(e.find("YAML syntax error") != std::string::npos);
  }
  SUBCASE("empty document") { CHECK(error_of("# nothing\n").find("empty scenario") != std::string::npos); }
  SUBCASE("several documents") {
    CHECK(error_of(kValid + "---\n" + kValid).find("expected one YAML document") != std::string::npos);
  }
  SUBCASE("a list at the top") {
    CHECK(error_of("- 1\n- 2\n").find("key '(document)': value (a sequence): expected a mapping") !=
          std::string::npos);
  }
}

TEST_CASE("hostile documents fail fast with a located error") {
  SUBCASE("alias bomb (billion laughs) as a value") {
    std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 40; ++i) {
      bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
      for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
      bomb += "]\n";
    }
    CHECK(error_of(bomb + "world_size: *a39\n").find("key 'a0': unknown key") != std::string::npos);
    const std::string in_known = replace(kValid, "world_size: [1, 2]", "world_size: *a39") + bomb;
    CHECK(error_of(in_known).find("YAML syntax error") != std::string::npos);  // alias before anchor
    const std::string after = bomb + replace(kValid, "world_size: [1, 2]", "world_size: *a39");
    CHECK_FALSE(error_of(after).empty());
  }
  SUBCASE("a token no value starts with (yaml-cpp 0.7's LoadAll looped on it)") {
    CHECK(error_of(",\n").find("s.yaml:1:1: value ',': YAML syntax error: no value can start here") == 0);
    CHECK(error_of(", the\n  world_size: 1\n").find("YAML syntax error") != std::string::npos);
    CHECK(error_of(kValid + "---\n,\n").find("expected one YAML document") != std::string::npos);
  }
  SUBCASE("20,000 nesting levels") {
    const std::string deep = "world_size: " + std::string(20000, '[') + std::string(20000, ']') + "\n";
    CHECK(error_of(deep).find("line longer than 4096 bytes") != std::string::npos);
    std::string nested;
    for (int i = 0; i < 20000; ++i) nested += std::string(static_cast<std::size_t>(i % 64), ' ') + "[\n";
    CHECK(error_of(nested).find("YAML syntax error") != std::string::npos);
  }
  SUBCASE("a multi-megabyte line") {
    const auto e = error_of("name: " + std::string(3'000'000, 'x') + "\n");
    CHECK(e.find("s.yaml") == 0);
    CHECK(e.find("larger than 1048576 bytes") != std::string::npos);
    const auto line = error_of("name: " + std::string(100'000, 'x') + "\n");
    CHECK(line.find("s.yaml:1:4097: line longer than 4096 bytes") == 0);
  }
  SUBCASE("binary garbage") {
    std::string garbage;
    std::uint32_t x = 12345;
    for (int i = 0; i < 4096; ++i) {
      x = x * 1103515245u + 12345u;
      garbage += static_cast<char>(x >> 24);
    }
    CHECK(error_of(garbage).find("expected UTF-8 text") != std::string::npos);
  }
  SUBCASE("a NUL byte") {
    const auto e = error_of(std::string("name: a\0b\n", 10));
    CHECK(e.find("s.yaml:1:8: value 0x00: a control character") == 0);
  }
  SUBCASE("invalid UTF-8") {
    CHECK(error_of("name: caf\xe9\n").find("s.yaml:1:10: value 0xe9: invalid UTF-8") == 0);
  }
}

TEST_CASE("load_scenario reports unreadable files") {
  try {
    scenarios::load_scenario("/nonexistent/x.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/x.yaml: no such file: expected a scenario file");
  }
}

TEST_CASE("model forms: parameters list, ready order, layers, GFLOP times") {
  const std::string& base = scenarios::testing::kSmallBase;
  const std::string& params = scenarios::testing::kSmallParams;
  SUBCASE("parameters with whole-model times; default ready order is reverse registration") {
    const auto s = parse_scenario(base + params + "  forward_ms: 1\n  backward_ms: 2.8\n", "s.yaml");
    CHECK(s.job.model.parameters[1].dtype == models::DType::kBFloat16);
    CHECK(s.job.model.parameters[1].bytes() == 8);
    CHECK(s.job.model.ready_order == std::vector<int>{2, 1, 0});
    CHECK(s.job.model.backward[0] == sim::Time::from_ms(1.6));  // 16 of 28 elements
  }
  SUBCASE("explicit ready order") {
    const auto s = parse_scenario(
        base + params + "  gradient_ready_order: [b1, w2, w1]\n  forward_ms: 1\n  backward_ms: 2\n", "s.yaml");
    CHECK(s.job.model.ready_order == std::vector<int>{1, 2, 0});
  }
  SUBCASE("ready order with a misspelt or missing name") {
    CHECK(error_of(base + params + "  gradient_ready_order: [b1, w22, w1]\n  forward_ms: 1\n  backward_ms: 2\n")
              .find("expected the name of a model parameter (did you mean 'w2'?)") != std::string::npos);
    CHECK(error_of(base + params + "  gradient_ready_order: [b1, w1]\n  forward_ms: 1\n  backward_ms: 2\n")
              .find("lists 2 of 3 parameters; missing, for one: 'w2'") != std::string::npos);
  }
  SUBCASE("layers in ms and GFLOP") {
    const auto s = parse_scenario(base + params + R"(  layers:
    - {params: [w1, b1], forward_ms: 2, backward_ms: 4}
    - {params: [w2], forward_gflops: 50, backward_gflops: 100}
device: {peak_tflops: 100, efficiency: 0.5}
)",
                                  "s.yaml");
    // 100 GFLOP at 50 TFLOP/s = 2 ms.
    CHECK(s.job.model.backward[2] == sim::Time::from_ms(2));
    CHECK(s.job.model.backward[0] + s.job.model.backward[1] == sim::Time::from_ms(4));
  }
  SUBCASE("a parameter in no layer") {
    CHECK(error_of(base + params + "  layers:\n    - {params: [w1, b1], forward_ms: 2, backward_ms: 4}\n")
              .find("key 'model.layers': parameter 'w2' is in no layer") != std::string::npos);
  }
  SUBCASE("GFLOP without a device") {
    CHECK(error_of(base + params + "  forward_gflops: 1\n  backward_gflops: 2\n")
              .find("key 'device.peak_tflops': missing") != std::string::npos);
  }
  SUBCASE("a device that nothing uses") {
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\ndevice: {peak_tflops: 1, efficiency: 1}\n")
              .find("no compute time is in gflops") != std::string::npos);
  }
  SUBCASE("two model forms") {
    CHECK(error_of(base + params + "  gradient_bytes: 8\n  forward_ms: 1\n  backward_ms: 2\n")
              .find("expected exactly one of preset, parameters, gradient_bytes") != std::string::npos);
  }
  SUBCASE("a zero dimension, a bad dtype, a repeated name") {
    CHECK(error_of(base + "model:\n  parameters: [{name: w, shape: [0]}]\n  forward_ms: 1\n  backward_ms: 1\n")
              .find("key 'model.parameters[0].shape': value '0'") != std::string::npos);
    CHECK(error_of(base + "model:\n  parameters: [{name: w, shape: [2], dtype: float8}]\n  forward_ms: 1\n  backward_ms: 1\n")
              .find("expected one of: float32") != std::string::npos);
    CHECK(error_of(base + "model:\n  parameters: [{name: w, shape: [2]}, {name: w, shape: [3]}]\n  forward_ms: 1\n"
                          "  backward_ms: 1\n")
              .find("not used by an earlier tensor") != std::string::npos);
  }
}

TEST_CASE("ddp and data keys") {
  const std::string& base = scenarios::testing::kSmallBase;
  const std::string& params = scenarios::testing::kSmallParams;
  SUBCASE("ddp keys") {
    const auto s = parse_scenario(base + params + R"(  forward_ms: 1
  backward_ms: 2
ddp:
  bucket_cap_mb: 0.5
  first_bucket_mb: 0.25
  find_unused_parameters: true
  broadcast_buffers: false
  gradient_accumulation: 4
  unused_parameters: [w2]
  traversal_us_per_tensor: 3
  bucket_copy_GBps: 2.5
)",
                                  "s.yaml");
    CHECK(s.job.ddp.bucket_cap_bytes == 524'288);
    CHECK(s.job.ddp.first_bucket_bytes == 262'144);
    CHECK(s.job.ddp.find_unused_parameters);
    CHECK_FALSE(s.job.ddp.broadcast_buffers);
    CHECK(s.job.ddp.gradient_accumulation == 4);
    CHECK(s.job.ddp.unused_parameters == std::vector<int>{2});
    CHECK(s.job.ddp.traversal_per_tensor == sim::Time::from_us(3));
    CHECK(s.job.ddp.bucket_copy_bytes_per_s == 2.5e9);
    CHECK(parse_scenario(base + params + "  forward_ms: 1\n  backward_ms: 2\ncontention: {compute_slowdown: 0.25}\n", "c.yaml")
              .job.compute_slowdown == 0.25);
    CHECK(parse_scenario(base + params + "  forward_ms: 1\n  backward_ms: 2\ncontention: {comm_slowdown: 0.5}\n", "c.yaml")
              .job.comm_slowdown == 0.5);
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\ncontention: {comm_slowdown: 1e7}\n")
              .find("key 'contention.comm_slowdown': value '1e7'") != std::string::npos);
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\ncontention: {compute_slowdown: -1}\n")
              .find("key 'contention.compute_slowdown': value '-1'") != std::string::npos);
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\nddp: {bucket_copy_GBps: 0}\n")
              .find("key 'ddp.bucket_copy_GBps': value '0': expected a finite number > 0") != std::string::npos);
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\nddp: {static_graph: yes}\n")
              .find("key 'ddp.static_graph': value 'yes': expected true or false") != std::string::npos);
  }
  SUBCASE("data: the sampler") {
    const auto s = parse_scenario(
        base + params + "  forward_ms: 1\n  backward_ms: 2\ndata: {dataset_size: 128, drop_last: true, epochs: 3}\n",
        "s.yaml");
    REQUIRE(s.sampler.has_value());
    CHECK(s.sampler->dataset_size == 128);
    CHECK(s.sampler->drop_last);
    CHECK(s.sampler->epochs == 3);
    CHECK(error_of(base + params + "  forward_ms: 1\n  backward_ms: 2\ndata: {epochs: 3}\n")
              .find("key 'data.epochs': needs data.dataset_size") != std::string::npos);
  }
}

TEST_CASE("faults, epochs, backend and watchdog keys") {
  const std::string base = R"(world_size: [2, 4]
training: {iterations: 4, epochs: 2}
model: {gradient_bytes: 36, forward_ms: 1, backward_ms: 2}
collective: {latency_us: 5, bandwidth_GBps: 10}
)";
  SUBCASE("valid faults") {
    const auto s = parse_scenario(base + R"(faults:
  - {type: skip_backward, rank: 1, iteration: 7}
  - {type: uneven_batches, rank: [0, 1], fewer: 1}
  - {type: extra_collective, rank: 0, iteration: 2}
  - {type: slowdown, rank: 1, factor: 1.5, from_iteration: 2, target: data}
  - {type: rank0_artifact, every: 4, duration_ms: 20}
  - {type: crash, rank: 1, at_ms: 1000}
  - {type: link_down, rank: 0, at_ms: 250}
)",
                                  "s.yaml");
    REQUIRE(s.job.faults.size() == 7);
    CHECK(s.job.epochs == 2);
    CHECK(s.job.faults[1].ranks == std::vector<int>{0, 1});
    namespace fault = models::fault;
    REQUIRE(s.job.faults[0].as<fault::SkipBackward>());
    CHECK(s.job.faults[0].as<fault::SkipBackward>()->iteration == 7);
    REQUIRE(s.job.faults[1].as<fault::UnevenBatches>());
    CHECK(s.job.faults[1].as<fault::UnevenBatches>()->fewer == 1);
    REQUIRE(s.job.faults[2].as<fault::ExtraCollective>());
    CHECK(s.job.faults[2].as<fault::ExtraCollective>()->collective.bytes == 4);
    CHECK(s.job.faults[2].as<fault::ExtraCollective>()->collective.kind == sim::CollectiveKind::kAllReduce);
    const auto* slow = s.job.faults[3].as<fault::Slowdown>();
    REQUIRE(slow);
    CHECK(slow->data);
    CHECK(slow->factor == 1.5);
    CHECK(slow->from_iteration == 2);
    CHECK(slow->to_iteration == 7);
    CHECK(s.job.faults[4].ranks == std::vector<int>{0});
    REQUIRE(s.job.faults[4].as<fault::Rank0Artifact>());
    CHECK(s.job.faults[4].as<fault::Rank0Artifact>()->every == 4);
    CHECK(s.job.faults[4].as<fault::Rank0Artifact>()->iteration == -1);
    REQUIRE(s.job.faults[5].as<fault::Crash>());
    CHECK(s.job.faults[5].as<fault::Crash>()->at == sim::Time::from_ms(1000));
    CHECK(s.job.faults[5].as<fault::Crash>()->iteration == -1);
    REQUIRE(s.job.faults[6].as<fault::LinkDown>());
    CHECK(s.job.faults[6].as<fault::LinkDown>()->at == sim::Time::from_ms(250));
    CHECK(s.job.faults[6].ranks == std::vector<int>{0});
    CHECK(s.job.watchdog_timeout == sim::Time::from_ms(600'000));
  }
  SUBCASE("gloo's watchdog default is 30 minutes") {
    const auto s = parse_scenario(replace(base, "latency_us: 5", "backend: gloo, latency_us: 5"), "s.yaml");
    CHECK(s.job.backend == models::Backend::kGloo);
    CHECK(s.job.watchdog_timeout == sim::Time::from_ms(1'800'000));
  }
  SUBCASE("a rank outside the smallest world") {
    CHECK(error_of(base + "faults: [{type: skip_backward, rank: 2, iteration: 1}]\n")
              .find("key 'faults[0].rank': value '2': expected an integer from 0 to 1") != std::string::npos);
  }
  SUBCASE("an iteration past the end") {
    CHECK(error_of(base + "faults: [{type: skip_backward, rank: 1, iteration: 8}]\n")
              .find("expected an integer from 0 to 7") != std::string::npos);
  }
  SUBCASE("a key of another fault type") {
    CHECK(error_of(base + "faults: [{type: skip_backward, rank: 1, iteration: 1, fewer: 2}]\n")
              .find("key 'faults[0].fewer': does not apply to a skip_backward fault (it takes rank, iteration)") !=
          std::string::npos);
  }
  SUBCASE("an unknown fault type") {
    CHECK(error_of(base + "faults: [{type: skip_forward, rank: 1}]\n").find("expected one of: skip_backward") !=
          std::string::npos);
  }
  SUBCASE("a slow link from the start, or from at_ms on") {
    const auto s = parse_scenario(base + R"(faults:
  - {type: slow_link, rank: 1, factor: 4}
  - {type: slow_link, rank: 0, factor: 2.5, at_ms: 1500}
)",
                                  "s.yaml");
    REQUIRE(s.job.faults.size() == 2);
    const auto* from_start = s.job.faults[0].as<models::fault::SlowLink>();
    const auto* later = s.job.faults[1].as<models::fault::SlowLink>();
    REQUIRE(from_start);
    REQUIRE(later);
    CHECK_FALSE(from_start->at);
    CHECK(later->at == sim::Time::from_ms(1500));
    CHECK(later->factor == 2.5);
    CHECK(error_of(base + "faults: [{type: slow_link, rank: 1, factor: 4, at_ms: -1}]\n").find("key 'faults[0].at_ms'") !=
          std::string::npos);
  }
  SUBCASE("a crash needs exactly one of iteration and at_ms") {
    CHECK(error_of(base + "faults: [{type: crash, rank: 1}]\n").find("expected exactly one of iteration, at_ms") !=
          std::string::npos);
  }
}

namespace {

using scenarios::testing::kLayered;

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("a calibration file replaces the collective, per-layer, optimizer and data values it gives") {
  const auto cal = write_temp("ddpsim_cal_test.yaml", R"(collective:
  latency_us: 7.5
  bandwidth_GBps: 2.5
model:
  layers:
    - {name: layers.0, params: [layers.0.weight, layers.0.bias], forward_ms: 0.3, backward_ms: 0.6}
    - {name: layers.1, params: [layers.1.weight, layers.1.bias], forward_ms: 0.1, backward_ms: 0.2}
  optimizer_ms: 0.05
data:
  load_ms: 0.02
straggler:
  model: log2
  penalty_ms: 1.5
)");
  scenarios::Scenario s = parse_scenario(kLayered, "s.yaml");
  scenarios::apply_calibration(s, cal.string());
  CHECK(s.job.network.latency.us() == doctest::Approx(7.5));
  CHECK(s.job.network.bandwidth_GBps == doctest::Approx(2.5));
  CHECK(s.job.network.launch_overhead.count_ns() == 0);  // not in the file: the scenario's stays
  CHECK(s.job.model.forward_total().ms() == doctest::Approx(0.4));
  CHECK(s.job.model.backward_total().ms() == doctest::Approx(0.8));
  // Layer 0's 0.3 ms spread over its 8 + 4 elements.
  CHECK(s.job.model.forward[0].ms() == doctest::Approx(0.2));
  CHECK(s.job.model.forward[1].ms() == doctest::Approx(0.1));
  CHECK(s.job.model.optimizer.ms() == doctest::Approx(0.05));
  CHECK(s.job.data_load.ms() == doctest::Approx(0.02));
  const auto* straggler = std::get_if<models::Log2Straggler>(&s.job.straggler);
  REQUIRE(straggler);
  CHECK(straggler->penalty.ms() == doctest::Approx(1.5));
  CHECK(s.calibration == cal.string());
  CHECK(s.calibration_sha256.size() == 64);
  CHECK(s.sha256 == sim::to_hex(sim::sha256(kLayered)));  // provenance: the scenario's own text
}

TEST_CASE("calibration: in a scenario is read relative to the scenario's folder, and checked like one") {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_cal_dir";
  std::filesystem::create_directories(dir);
  write_temp("ddpsim_cal_dir/cal.yaml", "collective:\n  bandwidth_GBps: 3\n");
  const auto scenario = dir / "s.yaml";
  const scenarios::Scenario s = parse_scenario(kLayered + "calibration: cal.yaml\n", scenario.string());
  CHECK(s.job.network.bandwidth_GBps == doctest::Approx(3));
  write_temp("ddpsim_cal_dir/bad.yaml", "collective:\n  bandwith_GBps: 3\n");
  try {
    parse_scenario(kLayered + "calibration: bad.yaml\n", scenario.string());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("bad.yaml:2:3: key 'collective.bandwith_GBps'") != std::string::npos);
    CHECK(what.find("bandwidth_GBps") != std::string::npos);  // did you mean
  }
  try {
    parse_scenario(kLayered + "calibration: missing.yaml\n", scenario.string());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("missing.yaml: no such file: expected a calibration file") != std::string::npos);
  }
}
