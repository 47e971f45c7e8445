// Simulated rank-events per second: one rank-event is one operation
// (data, forward, backward, all-reduce, optimizer) completed on one rank.
// Run: build/bench/engine_bench (figures in README.md).

#include <benchmark/benchmark.h>

#include "models/ddp_job.hpp"
#include "scenarios/scenario.hpp"

namespace {

using ddpsim::sim::Time;

// The scaling lab's job (scenarios/scaling_lab.yaml).
ddpsim::models::DdpJob lab_job(int iterations) {
  ddpsim::models::DdpJob job;
  job.model = ddpsim::models::block_model(Time::from_ms(40), Time::from_ms(80), Time::from_ms(0.25), 4'000'000);
  job.iterations = iterations;
  job.warmup_iterations = 1;
  job.network = {Time::from_us(180), 25.0, Time::from_us(50)};
  job.straggler = ddpsim::models::Log2Straggler{Time::from_ms(4.9), -1};
  return job;
}

void BM_DdpSimulation(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const int iterations = static_cast<int>(state.range(1));
  const auto job = lab_job(iterations);
  std::uint64_t rank_events = 0;
  for (auto _ : state) {
    const auto r = ddpsim::models::simulate_ddp(job, ranks, 1);
    benchmark::DoNotOptimize(r.step_ms);
    rank_events += r.rank_ops;
  }
  state.counters["rank_events"] = static_cast<double>(rank_events) / static_cast<double>(state.iterations());
  state.counters["rank_events_per_s"] = benchmark::Counter(static_cast<double>(rank_events), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_DdpSimulation)->Args({1024, 100})->Args({64, 100})->Args({4096, 100})->Unit(benchmark::kMillisecond);

// ResNet-50 preset (5 buckets after the rebuild, BatchNorm buffer broadcast):
// 13 operations per rank per iteration.
void BM_ResNet50(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const auto scenario = ddpsim::scenarios::parse_scenario(
      "world_size: 1\ntraining: {iterations: 100}\n"
      "model: {preset: resnet50, forward_ms: 32.7, backward_ms: 65.3, optimizer_ms: 2}\n"
      "collective: {latency_us: 10, bandwidth_GBps: 40, launch_overhead_us: 15}\n",
      "bench");
  std::uint64_t rank_events = 0;
  for (auto _ : state) {
    const auto r = ddpsim::models::simulate_ddp(scenario.job, ranks, 1);
    benchmark::DoNotOptimize(r.step_ms);
    rank_events += r.rank_ops;
  }
  state.counters["rank_events"] = static_cast<double>(rank_events) / static_cast<double>(state.iterations());
  state.counters["rank_events_per_s"] = benchmark::Counter(static_cast<double>(rank_events), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ResNet50)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
