// Oracle tests: ddpsim's predictions against published measurements
// (../shared/reference/published_numbers.md). The measured numbers below are
// copied from the cited sources; the predictions come from the scenarios.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <vector>

#include "models/baseline.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"
#include "validate/median.hpp"
#include "validate/validation.hpp"

using namespace ddpsim;

namespace {
std::string scenario_path(const char* rel) { return std::string(DDPSIM_SOURCE_DIR) + "/scenarios/" + rel; }
}  // namespace

// pytorch/pytorch benchmarks/distributed/ddp/README.md: p50 ms per iteration, DDP on 1 to 16 V100s.
struct Published {
  const char* scenario;
  std::map<int, double> measured_ms;
};
const Published kV100[] = {
    {"published/resnet50_v100.yaml", {{1, 100}, {2, 103}, {4, 103}, {8, 104}, {16, 104}}},
    {"published/resnet101_v100.yaml", {{1, 171}, {2, 176}, {4, 176}, {8, 179}, {16, 179}}},
    {"published/resnext50_32x4d_v100.yaml", {{1, 147}, {2, 153}, {4, 153}, {8, 157}, {16, 157}}},
    {"published/resnext101_32x8d_v100.yaml", {{1, 425}, {2, 438}, {4, 439}, {8, 447}, {16, 450}}},
};

using validate::median;

namespace {
/// The scenario's step time, ms, per bucket cap and world size.
std::map<double, std::map<int, double>> steps_by_cap(const scenarios::Scenario& s) {
  std::map<double, std::map<int, double>> step;
  for (const auto& row : scenarios::run_scenario(s).rows) step[row.bucket_cap_mb][row.run.world_size] = *row.run.step_ms;
  return step;
}
/// How much slower 1 MiB buckets are than 25 at world size w, %.
double small_bucket_slowdown_pct(const std::map<double, std::map<int, double>>& step, int w) {
  return 100 * (step.at(1).at(w) / step.at(25).at(w) - 1);
}
}  // namespace

TEST_CASE("PyTorch's V100 DDP benchmark, every model: the simulator and the closed form, row by row") {
  // The target: 5 % a row, and the simulator closer than the closed form on
  // the median of the 16 multi-GPU rows. The simulator's one fitted term,
  // contention.compute_slowdown, comes from ResNet-50's rows alone; the
  // other three models are held out (docs/validation.md).
  std::vector<double> simulated, closed_form, held_out_simulated, held_out_closed_form;
  for (const Published& p : kV100) {
    const auto s = scenarios::load_scenario(scenario_path(p.scenario));
    const auto r = scenarios::run_scenario(s);
    REQUIRE(r.rows.size() == p.measured_ms.size());
    for (const auto& row : r.rows) {
      const int w = row.run.world_size;
      const double measured = p.measured_ms.at(w);
      const double error = 100 * (*row.run.step_ms - measured) / measured;
      const double closed = 100 * (models::closed_form_step_ms(s.job, w) - measured) / measured;
      MESSAGE(s.name << " W=" << w << ": simulated " << *row.run.step_ms << " ms (" << error << " %), closed form ("
                     << closed << " %)");
      CAPTURE(s.name);
      CAPTURE(w);
      CHECK(std::fabs(error) < 5);
      // The closed form is within 5 % on these rows too (worst 2.3 %): this row check cannot tell
      // a model from a formula. What does is below: the held-out median, and the bucket-cap effect.
      if (w > 1) {
        simulated.push_back(std::fabs(error));
        closed_form.push_back(std::fabs(closed));
        if (&p != &kV100[0]) {
          held_out_simulated.push_back(std::fabs(error));
          held_out_closed_form.push_back(std::fabs(closed));
        }
      }
    }
  }
  MESSAGE("median |error| over the 16 multi-GPU rows: simulator " << median(simulated) << " %, closed form "
                                                                   << median(closed_form) << " %; over the 12 held-out rows "
                                                                   << median(held_out_simulated) << " % against "
                                                                   << median(held_out_closed_form) << " %");
  // The median against the closed form, judged on the held-out models only (ResNet-50's rows
  // fitted the one fitted term): reported, and not met (1.7 % against 1.1 %, docs/validation.md).
  // Over all 16 rows, the fitted ones included, the simulator looked closer (1.0 % against 1.2 %).
  MESSAGE("held-out target (simulator closer than the closed form): "
          << (median(held_out_simulated) < median(held_out_closed_form) ? "met" : "not met"));
}

// The same README: the throughput lost with bucket_cap_mb=1 against 25, p75, at 1 / 2 / 4 / 8 / 16 GPUs
// (a slowdown here: +1.0 is 1 MiB buckets 1.0 % slower).
const std::map<int, double> kSmallBucketSlowdownPct[] = {
    {{1, 0.3}, {2, 1.0}, {4, 1.6}, {8, 2.6}, {16, 3.8}},   // resnet50
    {{1, 1.2}, {2, 2.1}, {4, 2.6}, {8, 3.5}, {16, 0.1}},   // resnet101 (p95 at 16: 7.9)
    {{1, 1.0}, {2, 1.5}, {4, 1.6}, {8, 1.5}, {16, 1.9}},   // resnext50_32x4d
    {{1, 0.8}, {2, 1.3}, {4, 1.1}, {8, 1.3}, {16, 0.7}}};  // resnext101_32x8d

TEST_CASE("PyTorch's V100 DDP benchmark: 1 MiB buckets against 25, every model") {
  // Each published scenario run at caps 1 and 25. Nothing is fitted to these
  // rows: the one fitted term is the contention of ResNet-50's step times at
  // 25 MiB, which makes a 1 MiB bucket's many small all-reduces slow the
  // backward they overlap. The target is one percentage point a row;
  // it holds on ResNet-50 at every size and on the median of every row, not
  // on every row (docs/validation.md "Bucket size"). These rows were not used
  // to calibrate (the fit took the 25 MiB step times).
  // The closed form prices every bucket's all-reduce unoverlapped: the check must tell the simulator
  // from it, so the closed form's own slowdown is computed beside and shown to miss.
  std::vector<double> misses, closed_misses, resnet50_closed_misses;
  for (std::size_t m = 0; m < std::size(kV100); ++m) {
    auto s = scenarios::load_scenario(scenario_path(kV100[m].scenario));
    s.sweep.bucket_caps_mb = {1, 25};
    s.job = scenarios::with_cap(s.job, 1);
    const auto step = steps_by_cap(s);
    for (const auto& [w, measured] : kSmallBucketSlowdownPct[m]) {
      const double predicted = small_bucket_slowdown_pct(step, w);
      const double closed = 100 * (models::closed_form_step_ms(scenarios::with_cap(s.job, 1), w) /
                                       models::closed_form_step_ms(scenarios::with_cap(s.job, 25), w) -
                                   1);
      MESSAGE(s.name << " W=" << w << ": 1 MiB against 25 predicted " << predicted << " %, closed form " << closed
                     << " %, measured " << measured << " %");
      CAPTURE(s.name);
      CAPTURE(w);
      CHECK(predicted > 0);  // 1 MiB buckets cost time, as measured everywhere
      if (m == 0) CHECK(std::fabs(predicted - measured) <= 1.0);
      misses.push_back(std::fabs(predicted - measured));
      closed_misses.push_back(std::fabs(closed - measured));
      if (m == 0) resnet50_closed_misses.push_back(std::fabs(closed - measured));
    }
  }
  MESSAGE("median |predicted - measured| over the 20 rows: simulator " << median(misses) << ", closed form "
                                                                        << median(closed_misses) << " percentage points");
  CHECK(median(misses) <= 1.0);
  // The one-point-a-row check on ResNet-50 discriminates: the closed form, which prices every 1 MiB
  // bucket's all-reduce unoverlapped, misses it at 8 and 16 GPUs (4.4 and 6.1 % against 2.6 and 3.8).
  // The 20-row median does not (the closed form's is 0.7 points too): it is reported, not the test.
  CHECK(*std::max_element(resnet50_closed_misses.begin(), resnet50_closed_misses.end()) > 1.0);
}

TEST_CASE("the published scenarios' contention term is what calibrate fits on ResNet-50's rows") {
  const Published& fitted_on = kV100[0];
  auto s = scenarios::load_scenario(scenario_path(fitted_on.scenario));
  std::vector<validate::ContentionFit> fits;
  for (const auto& [w, ms] : fitted_on.measured_ms) {
    if (w > 1) fits.push_back(validate::fit_compute_slowdown(s, w, ms));
  }
  const double refit = validate::median_compute_slowdown(fits);
  MESSAGE("refitted s = " << refit);
  for (const Published& p : kV100) {
    CAPTURE(p.scenario);
    // The scenarios print it to six digits.
    CHECK(scenarios::load_scenario(scenario_path(p.scenario)).job.compute_slowdown == doctest::Approx(refit).epsilon(1e-5));
  }
  // scenarios/bucket_sweep.yaml is ResNet-50 on the same V100s.
  CHECK(scenarios::load_scenario(scenario_path("bucket_sweep.yaml")).job.compute_slowdown ==
        doctest::Approx(refit).epsilon(1e-5));
}

namespace {
// The published scenarios before they had a cluster: one ring over every
// GPU, at the routes inside a node (40 GB/s and 10 us a step) wherever it goes.
void as_one_flat_ring(scenarios::Scenario& s) {
  s.job.network.latency = s.job.cluster->intra.latency;
  s.job.network.bandwidth_GBps = s.job.cluster->intra.bandwidth_GBps;
  s.job.cluster.reset();
  s.job.algorithm = models::Algorithm::kRing;
}
// The hierarchical all-reduce alone on the scenarios' two DGX-1 nodes, its
// NICs written as 8 of 6.25 GB/s (a GPU's share of 4 x 12.5: the
// hierarchical formula gives each local GPU's inter-node ring a NIC).
void as_hierarchical(scenarios::Scenario& s) {
  s.job.cluster->nics_per_node = 8;
  s.job.cluster->inter.bandwidth_GBps = 6.25;
  s.job.algorithm = models::Algorithm::kHierarchical;
}
}  // namespace

TEST_CASE("the 16-GPU rows: the per-call choice against the flat ring and the hierarchical all-reduce") {
  // What made the flat ring overprice 1 MiB buckets at 16 GPUs is its 2(W-1)
  // = 30 step latencies a call. The hierarchical all-reduce pays 2(G-1) = 14
  // intra-node and 2(N-1) = 2 inter-node ones, the count of NCCL's tree at two
  // nodes, but runs its phases one after the other, so 25 MiB buckets cost
  // more than on the ring. The scenarios' `algorithm: auto` takes the faster
  // per call, as NCCL does. docs/validation.md, "Bucket size", gives the
  // figures this prints.
  std::vector<double> flat_misses, hierarchical_misses, auto_misses;
  for (std::size_t m = 0; m < std::size(kV100); ++m) {
    auto s = scenarios::load_scenario(scenario_path(kV100[m].scenario));
    REQUIRE(s.job.algorithm == models::Algorithm::kAuto);
    s.sweep.world_sizes = {16};
    s.sweep.bucket_caps_mb = {1, 25};
    s.job = scenarios::with_cap(s.job, 1);
    const auto automatic = steps_by_cap(s);
    models::AnalyticTimer timer(*s.job.cluster, s.job.network.launch_overhead, s.job.algorithm);
    CHECK(timer.algorithm_for({sim::CollectiveKind::kAllReduce, 1 << 20}, 16) == models::Algorithm::kHierarchical);
    CHECK(timer.algorithm_for({sim::CollectiveKind::kAllReduce, 25 << 20}, 16) == models::Algorithm::kRing);
    auto h = s;
    as_hierarchical(h);
    const auto hierarchical = steps_by_cap(h);
    as_one_flat_ring(s);
    const auto flat = steps_by_cap(s);
    const double measured = kSmallBucketSlowdownPct[m].at(16), step = kV100[m].measured_ms.at(16);
    const double pct[] = {small_bucket_slowdown_pct(flat, 16), small_bucket_slowdown_pct(hierarchical, 16),
                          small_bucket_slowdown_pct(automatic, 16)};
    const double step_25[] = {flat.at(25).at(16), hierarchical.at(25).at(16), automatic.at(25).at(16)};
    MESSAGE(s.name << " W=16, 1 MiB against 25: measured " << measured << " %; flat ring " << pct[0] << " %, hierarchical "
                   << pct[1] << " %, auto " << pct[2] << " %; 25 MiB step against " << step << " ms: flat ring "
                   << 100 * (step_25[0] / step - 1) << " %, hierarchical " << 100 * (step_25[1] / step - 1) << " %, auto "
                   << 100 * (step_25[2] / step - 1) << " %");
    CAPTURE(s.name);
    CHECK(pct[2] > 0);
    CHECK(step_25[1] > step_25[0]);                                  // the phases in series: big buckets cost more
    CHECK(std::fabs(step_25[2] - step_25[0]) < 0.002 * step_25[0]);  // auto keeps the ring's price for them
    flat_misses.push_back(std::fabs(pct[0] - measured));
    hierarchical_misses.push_back(std::fabs(pct[1] - measured));
    auto_misses.push_back(std::fabs(pct[2] - measured));
  }
  MESSAGE("median miss of the four 16-GPU rows: flat ring " << median(flat_misses) << " points, hierarchical "
                                                             << median(hierarchical_misses) << ", auto "
                                                             << median(auto_misses));
  CHECK(median(auto_misses) < median(flat_misses) / 2);
}
