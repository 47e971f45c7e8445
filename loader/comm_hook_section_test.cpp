// ddp.comm_hook (loader/comm_hook_section.cpp): a hook's name, or a
// mapping with PowerSGDState's options and the rates its work is priced at.

#include <doctest/doctest.h>

#include <string>

#include "models/comm_hook.hpp"
#include "loader/scenario.hpp"
#include "loader/test_scenarios.hpp"

using namespace ddpsim;
using scenarios::parse_scenario;
using scenarios::testing::error_of;

namespace {

const std::string& kBase = scenarios::testing::kSmallBase;
const std::string& kParams = scenarios::testing::kSmallParams;

}  // namespace

TEST_CASE("ddp.comm_hook: a name, or a mapping with PowerSGDState's options and the rates") {
  const std::string m = kBase + kParams + "  forward_ms: 1\n  backward_ms: 2\n";
  CHECK(parse_scenario(m, "s.yaml").job.ddp.comm_hook.kind == models::CommHookKind::kAllReduce);
  const auto fp16 = parse_scenario(m + "ddp: {comm_hook: fp16_compress}\n", "s.yaml").job.ddp.comm_hook;
  CHECK(fp16.kind == models::CommHookKind::kFp16Compress);
  CHECK_FALSE(fp16.cost.measured);
  CHECK(fp16.cost.per_op == models::default_hook_cost(true).per_op);  // nccl: a GPU's defaults
  const auto p = parse_scenario(m + R"(ddp:
  comm_hook:
    name: powerSGD
    matrix_approximation_rank: 4
    start_powerSGD_iter: 3
    min_compression_rate: 1.5
    use_error_feedback: false
    warm_start: false
    orthogonalization_epsilon: 1.0e-8
    pass_GBps: 3
    matmul_GFLOPs: 40
    op_us: 7
)", "s.yaml").job.ddp.comm_hook;
  CHECK(p.kind == models::CommHookKind::kPowerSgd);
  CHECK(p.powersgd.matrix_approximation_rank == 4);
  CHECK(p.powersgd.start_powerSGD_iter == 3);
  CHECK(p.powersgd.min_compression_rate == 1.5);
  CHECK_FALSE(p.powersgd.use_error_feedback);
  CHECK_FALSE(p.powersgd.warm_start);
  CHECK(p.cost.pass_bytes_per_s == 3e9);
  CHECK(p.cost.matmul_flops_per_s == 40e9);
  CHECK(p.cost.per_op == sim::Time::from_us(7));
  CHECK(p.cost.measured);
  CHECK(error_of(m + "ddp: {comm_hook: fp32_compress}\n")
            .find("s.yaml:10:18: key 'ddp.comm_hook': value 'fp32_compress': expected one of: allreduce, fp16_compress, "
                  "bf16_compress, powerSGD, batched_powerSGD") != std::string::npos);
  CHECK(error_of(m + "ddp: {comm_hook: {matrix_approximation_rank: 2}}\n").find("key 'ddp.comm_hook.name': missing") !=
        std::string::npos);
  CHECK(error_of(m + "ddp: {comm_hook: {name: powerSGD, start_powerSGD_iter: 1}}\n")
            .find("key 'ddp.comm_hook.start_powerSGD_iter': value '1': expected > 1 with use_error_feedback") !=
        std::string::npos);
  CHECK(error_of(m + "ddp: {comm_hook: {name: fp16_compress, matrix_approximation_rank: 2}}\n")
            .find("key 'ddp.comm_hook.matrix_approximation_rank'") != std::string::npos);
  CHECK(error_of(m + "ddp: {comm_hook: {name: powerSGD, rank: 2}}\n").find("'ddp.comm_hook.rank': unknown key") != std::string::npos);
  const std::string gloo = "world_size: 2\ncollective: {backend: gloo, latency_us: 5, bandwidth_GBps: 10}\n";
  CHECK(error_of(gloo + kParams + "  forward_ms: 1\n  backward_ms: 2\nddp: {comm_hook: bf16_compress}\n")
            .find("key 'ddp.comm_hook': value 'bf16_compress': expected a hook gloo can all-reduce") != std::string::npos);
  const auto cpu = parse_scenario(gloo + kParams + "  forward_ms: 1\n  backward_ms: 2\nddp: {comm_hook: fp16_compress}\n",
                                  "s.yaml").job.ddp.comm_hook;
  CHECK(cpu.cost.cast_bytes_per_s == models::default_hook_cost(false).cast_bytes_per_s);
  CHECK(error_of(m + "training: {join: true}\nddp: {comm_hook: fp16_compress}\n").find("training.join") !=
        std::string::npos);
}
