// Simulated rank-events per second: one rank-event is one operation
// (data, forward, backward, all-reduce, optimizer) completed on one rank.
// Run: build/bench/engine_bench (figures in README.md).

#include <benchmark/benchmark.h>

#include <optional>

#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"

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
    const auto r = ddpsim::exec::simulate_ddp(job, ranks, 1);
    benchmark::DoNotOptimize(r.step_ms);
    rank_events += r.rank_ops;
  }
  state.counters["rank_events"] = static_cast<double>(rank_events) / static_cast<double>(state.iterations());
  state.counters["rank_events_per_s"] = benchmark::Counter(static_cast<double>(rank_events), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_DdpSimulation)->Args({1024, 100})->Args({64, 100})->Args({4096, 100})->Unit(benchmark::kMillisecond);

// ResNet-50 preset (5 buckets after the rebuild, BatchNorm buffer broadcast):
// 13 operations per rank per iteration. A symmetric job: `fast_path` off
// simulates every rank (the rank-event throughput), on simulates one. With
// no fault every rank issues the same operations, so exec::evaluate takes
// it levelized (sim::run_levelized); a `schedule` asks for the engine.
ddpsim::models::DdpJob resnet50_job(int iterations) {
  auto job = ddpsim::scenarios::parse_scenario(
                 "world_size: 1\n"
                 "model: {preset: resnet50, forward_ms: 32.7, backward_ms: 65.3, optimizer_ms: 2}\n"
                 "collective: {latency_us: 10, bandwidth_GBps: 40, launch_overhead_us: 15}\n",
                 "bench")
                 .job;
  job.iterations = iterations;
  job.warmup_iterations = 2;
  return job;
}

// Every rank simulated unless asked otherwise (the rank-event throughput).
ddpsim::exec::ExecutionPolicy every_rank(std::optional<ddpsim::sim::Schedule> schedule = std::nullopt, int threads = 1) {
  ddpsim::exec::ExecutionPolicy policy;
  policy.fast_path = false;
  policy.schedule = schedule;
  policy.threads = threads;
  return policy;
}

// Simulates `job` on range(0) ranks (its iterations: range(1)).
void run_job(benchmark::State& state, const ddpsim::models::DdpJob& job, const ddpsim::exec::ExecutionPolicy& policy) {
  const int ranks = static_cast<int>(state.range(0));
  std::uint64_t rank_events = 0;
  for (auto _ : state) {
    const auto r = ddpsim::exec::simulate_ddp(job, ranks, 1, policy);
    benchmark::DoNotOptimize(r.step_ms);
    rank_events += r.rank_ops;
  }
  state.counters["rank_events"] = static_cast<double>(rank_events) / static_cast<double>(state.iterations());
  state.counters["rank_events_per_s"] = benchmark::Counter(static_cast<double>(rank_events), benchmark::Counter::kIsRate);
  state.SetComplexityN(static_cast<std::int64_t>(ranks) * job.iterations);
}

int iterations(const benchmark::State& state) { return static_cast<int>(state.range(1)); }

void BM_ResNet50(benchmark::State& state) { run_job(state, resnet50_job(iterations(state)), every_rank()); }
// The same job on the discrete-event engine: time order (what
// exec::choose_schedule gives lockstep on one thread), rank-major on one
// and two threads.
void BM_ResNet50_time_order(benchmark::State& state) {
  run_job(state, resnet50_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kTimeOrder));
}
void BM_ResNet50_rank_major(benchmark::State& state) {
  run_job(state, resnet50_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kRankMajor));
}
void BM_ResNet50_rank_major_2threads(benchmark::State& state) {
  run_job(state, resnet50_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kRankMajor, 2));
}
void BM_ResNet50FastPath(benchmark::State& state) { run_job(state, resnet50_job(iterations(state)), {}); }

// The same job with jitter stragglers: every rank, every iteration, an
// exponential delay of mean 2 ms, so ranks never share an instant (what
// measured GPUs do). Every rank is simulated, levelized by default; on the
// engine, _rank_major is what choose_schedule gives such a job, _2threads
// the same on two threads, _time_order the other schedule.
ddpsim::models::DdpJob jitter_job(int iterations) {
  auto job = resnet50_job(iterations);
  job.straggler = ddpsim::models::JitterStraggler{ddpsim::models::JitterDistribution::kExponential, Time::from_ms(2), Time{}};
  return job;
}
void BM_ResNet50Jitter(benchmark::State& state) { run_job(state, jitter_job(iterations(state)), every_rank()); }
void BM_ResNet50Jitter_rank_major(benchmark::State& state) {
  run_job(state, jitter_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kRankMajor));
}
void BM_ResNet50Jitter_2threads(benchmark::State& state) {
  run_job(state, jitter_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kRankMajor, 2));
}
void BM_ResNet50Jitter_time_order(benchmark::State& state) {
  run_job(state, jitter_job(iterations(state)), every_rank(ddpsim::sim::Schedule::kTimeOrder));
}

// The targets: 1,024 ranks x 100 iterations; 100,000 ranks x 10.
BENCHMARK(BM_ResNet50)->Args({1024, 100})->Args({100000, 10})->Unit(benchmark::kMillisecond);
// Cost against ranks x iterations: four sizes, a fitted slope (BigO, ns per
// rank-iteration) and its RMS. 100 iterations: the steady state, which the
// set-up (allocating and first touching every rank's state) does not swamp;
// the _short variant, 10 iterations, shows the set-up's share.
template <int Iterations>
void scaling_sizes(benchmark::internal::Benchmark* b) {
  for (int ranks : {1024, 4096, 16384, 65536}) b->Args({ranks, Iterations});
  b->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_ResNet50)->Name("BM_ResNet50_scaling")->Apply(scaling_sizes<100>);
BENCHMARK(BM_ResNet50)->Name("BM_ResNet50_scaling_short")->Apply(scaling_sizes<10>);
BENCHMARK(BM_ResNet50_time_order)->Args({1024, 100})->Args({16384, 10})->Args({100000, 10})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResNet50_time_order)->Name("BM_ResNet50_time_order_scaling")->Apply(scaling_sizes<100>);
BENCHMARK(BM_ResNet50_rank_major)->Args({1024, 100})->Args({16384, 10})->Args({16384, 100})->Args({65536, 100})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResNet50_rank_major_2threads)->Args({16384, 100})->Args({65536, 100})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ResNet50Jitter)->Name("BM_ResNet50Jitter_scaling")->Apply(scaling_sizes<30>);
BENCHMARK(BM_ResNet50Jitter_rank_major)->Name("BM_ResNet50Jitter_rank_major_scaling")->Apply(scaling_sizes<30>);
BENCHMARK(BM_ResNet50Jitter_2threads)->Name("BM_ResNet50Jitter_2threads_scaling")->Apply(scaling_sizes<30>)->UseRealTime();
BENCHMARK(BM_ResNet50Jitter_time_order)->Args({1024, 30})->Args({16384, 30})->Unit(benchmark::kMillisecond);
// Symmetric: one rank simulated for all, whatever W.
BENCHMARK(BM_ResNet50FastPath)->Args({1024, 100})->Args({1000000, 100})->Unit(benchmark::kMillisecond);

// The two engines on bench/resnet50_64.yaml (ResNet-50, 64 GPUs on 8 nodes,
// 100 iterations): the scenario's whole sweep (W = 64 and the W = 1
// baseline), without the process start and the YAML parse both share.
// SimGrid runs once per process (netsim/simgrid_engine.hpp), so each case is
// one iteration; the SimGrid cases include loading the module and building
// the platform, which every SimGrid run pays.
void run_engine(benchmark::State& state, const char* engine, bool per_rank) {
  ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(DDPSIM_SOURCE_DIR "/bench/resnet50_64.yaml");
  scenario.engine = engine;
  ddpsim::exec::ExecutionPolicy policy;
  policy.fast_path = !per_rank;
  for (auto _ : state) {
    const auto result = ddpsim::scenarios::run_scenario(scenario, nullptr, 1, policy);
    benchmark::DoNotOptimize(result.rows.back().run.step_ms);
  }
}
void BM_Engine_analytic(benchmark::State& state) { run_engine(state, "analytic", false); }
void BM_Engine_analytic_per_rank(benchmark::State& state) { run_engine(state, "analytic", true); }
void BM_Engine_simgrid(benchmark::State& state) { run_engine(state, "simgrid", false); }
BENCHMARK(BM_Engine_analytic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Engine_analytic_per_rank)->Unit(benchmark::kMillisecond);
// Last: it must be the process's only SimGrid run.
BENCHMARK(BM_Engine_simgrid)->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
