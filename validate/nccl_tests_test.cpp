#include "validate/nccl_tests.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include "models/nccl_model.hpp"
#include "loader/input_error.hpp"

using namespace ddpsim;

namespace {

std::string error_of(const std::string& text) {
  try {
    (void)validate::parse_nccl_tests(text, "t.txt");
  } catch (const scenarios::InputError& e) {
    return e.what();
  }
  return "";
}

const char* kScenario = R"(name: node
world_size: 8
model: {gradient_bytes: 1000, forward_ms: 1, backward_ms: 2}
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: ampere
  intra: {bandwidth_GBps: 240, latency_us: 1}
collective: {model: nccl}
)";

}  // namespace

TEST_CASE("nccl-tests output: ranks from the device lines, the out-of-place time of each row") {
  const auto t = validate::parse_nccl_tests(
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#  Rank  0 Group  0 Pid  1 on host device  0 [0x07] NVIDIA A100\n"
      "#  Rank  1 Group  0 Pid  1 on host device  1 [0x0b] NVIDIA A100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    10.14    0.00    0.00      0     9.90    0.00    0.00      0\r\n"
      "\n"
      "          16             4     float     sum      -1    10.50    0.00    0.00      0    10.40    0.00    0.00      0\n"
      "# Avg bus bandwidth    : 0.001\n",
      "t.txt");
  CHECK(t.ranks == 2);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].bytes == 8);
  CHECK(t.rows[0].time_us == 10.14);
  CHECK(t.rows[1].time_us == 10.50);
}

TEST_CASE("nccl-tests output: located errors") {
  CHECK(error_of("#  Rank  0\n  8 2 float\n").find("t.txt:2:3: value 8 2 float: expected an nccl-tests row") == 0);
  CHECK(error_of("1.5 2 float sum -1 10 0 0 0\n").find("t.txt:1:1: key 'size': value 1.5: expected a size in bytes") == 0);
  CHECK(error_of("8 2 float sum -1 fast 0 0 0\n").find("t.txt:1:18: key 'time': value fast: expected the out-of-place time") == 0);
  CHECK(error_of("# only comments\n").find("expected nccl-tests output: no row") != std::string::npos);
}

TEST_CASE("nccl-tests' bandwidths and sizes") {
  // 128 MiB in 1295.41 us over 8 ranks: algbw 103.61, busbw 181.32 (table T1's last row).
  CHECK(validate::algbw_GBps(134217728, 1295.41) == doctest::Approx(103.61).epsilon(1e-4));
  CHECK(validate::busbw_GBps(sim::CollectiveKind::kAllReduce, 134217728, 1295.41, 8) == doctest::Approx(181.32).epsilon(1e-4));
  CHECK(validate::busbw_GBps(sim::CollectiveKind::kAllGather, 800, 1, 8) == doctest::Approx(0.7));
  CHECK(validate::busbw_GBps(sim::CollectiveKind::kBroadcast, 800, 1, 8) == doctest::Approx(0.8));
  CHECK(validate::busbw_GBps(sim::CollectiveKind::kReduce, 800, 1, 8) == doctest::Approx(0.8));
  CHECK(validate::busbw_GBps(sim::CollectiveKind::kAllToAll, 800, 1, 8) == doctest::Approx(0.7));
  CHECK(validate::parse_size_range("8:64", "--sizes") == std::vector<std::int64_t>{8, 16, 32, 64});
  CHECK(validate::parse_size_range("1M:4M", "--sizes") == std::vector<std::int64_t>{1 << 20, 2 << 20, 4 << 20});
  CHECK(validate::parse_size_range("16G:16G", "--sizes") == std::vector<std::int64_t>{std::int64_t{16} << 30});
  CHECK_THROWS_AS(validate::parse_size_range("0:8", "--sizes"), scenarios::InputError);
  CHECK_THROWS_AS(validate::parse_size_range("8", "--sizes"), scenarios::InputError);
  CHECK_THROWS_AS(validate::parse_size_range("8:2T", "--sizes"), scenarios::InputError);
}

TEST_CASE("the fit recovers the floor and bandwidth scale of a table NCCL's model made") {
  const scenarios::Scenario s = scenarios::parse_scenario(kScenario, "node.yaml");
  const models::NcclTimer truth(*s.job.cluster, sim::Time::from_us(30), 0.6);
  validate::NcclTestsTable table{"made.txt", 8, {}};
  for (std::int64_t b = 8; b <= (std::int64_t{1} << 30); b *= 4) {
    table.rows.push_back({b, truth.predict(sim::CollectiveKind::kAllReduce, b, 8).first});
  }
  const validate::NcclFit fit = validate::fit_nccl(s, {table});
  CHECK(fit.floor_us == doctest::Approx(30).epsilon(1e-6));
  CHECK(fit.bandwidth_scale == doctest::Approx(0.6).epsilon(1e-6));
  CHECK(fit.median_error_pct < 1e-6);
  CHECK(fit.rows == static_cast<int>(table.rows.size()));
  // The predicted table at the fit is the table.
  scenarios::Scenario fitted = s;
  fitted.job.network.launch_overhead = sim::Time::from_us(fit.floor_us);
  fitted.job.nccl_bandwidth_scale = fit.bandwidth_scale;
  const auto rows = validate::predict_collectives(fitted, sim::CollectiveKind::kAllReduce, {1 << 20}, 8);
  CHECK(rows.front().time_us == doctest::Approx(truth.predict(sim::CollectiveKind::kAllReduce, 1 << 20, 8).first));
  CHECK(rows.front().algorithm == "ring");
  // A table of more ranks than the cluster holds is refused.
  CHECK_THROWS_AS(validate::fit_nccl(s, {validate::NcclTestsTable{"big.txt", 16, table.rows}}), scenarios::InputError);
}
