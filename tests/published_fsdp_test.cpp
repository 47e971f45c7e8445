// Oracle tests: FSDP predictions against "Maximizing training throughput
// using PyTorch FSDP" (IBM and Meta, pytorch.org blog, 2024-03-13;
// ../shared/reference/fsdp_semantics.md section 5). The measured numbers
// are copied from the blog's table; the predictions come from the scenarios
// scripts/gen_llama_fsdp.py writes (docs/validation.md).

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "models/run_result.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"

using namespace ddpsim;

namespace {

std::string scenario_path(const std::string& name) {
  return std::string(DDPSIM_SOURCE_DIR) + "/scenarios/published/" + name + ".yaml";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The blog's table: tokens/s/GPU on 128 A100-80GB and on 96 H100-80GB; two
// sequences of 4,096 tokens a GPU a step.
struct Row {
  const char* size;
  double a100;
  double h100;
};
constexpr Row kTable[] = {{"7b", 3700, 7500}, {"13b", 1800, 3800}, {"34b", 700, 1550}, {"70b", 370, 800}};
constexpr double kTokensPerGpu = 2 * 4096;
constexpr double kGiB = 1024.0 * 1024 * 1024;

double error_pct(double predicted, double measured) { return 100 * (predicted - measured) / measured; }

}  // namespace

TEST_CASE("Llama 2 on 128 A100s and 96 H100s under FSDP: the simulator and the closed form, row by row") {
  // One fitted number a GPU, device.efficiency, on the 7b row; the other
  // three rows of each GPU are predictions. What they show
  // (docs/validation.md): the simulator is closer than the closed form on
  // every row, and it predicts the larger models low by more the larger
  // they are, because a constant fraction of peak cannot carry kernels that
  // run faster on wider matrices (the blog's own HFU grows from 0.57 to 0.67
  // on A100s). The bounds below are those findings; a wrong overlap, a
  // missing recompute or a mispriced collective moves a row past them.
  for (const char* gpu : {"a100", "h100"}) {
    double previous_error = 1e9;
    for (const Row& row : kTable) {
      const std::string name = std::string("llama2_") + row.size + "_" + gpu;
      const auto r = scenarios::run_scenario(scenarios::load_scenario(scenario_path(name)));
      REQUIRE(r.rows.size() == 1);
      const auto& run = r.rows[0].run;
      REQUIRE(run.outcome == models::Outcome::kCompleted);
      const double measured = std::string(gpu) == "a100" ? row.a100 : row.h100;
      const double simulated = error_pct(kTokensPerGpu / *run.step_ms * 1e3, measured);
      const double closed = error_pct(kTokensPerGpu / r.rows[0].closed_form_ms * 1e3, measured);
      MESSAGE(name << ": simulated " << kTokensPerGpu / *run.step_ms * 1e3 << " tokens/s/GPU (" << simulated
                   << " %), closed form (" << closed << " %), measured " << measured);
      CAPTURE(name);
      CHECK(std::fabs(simulated) < std::fabs(closed));
      if (std::string(row.size) == "7b") {
        CHECK(std::fabs(simulated) < 0.5);  // the fit of device.efficiency holds
      } else {
        CHECK(simulated < 0);                // predicted low ...
        CHECK(simulated > -30);
        CHECK(simulated < previous_error);   // ... and lower the larger the model
      }
      previous_error = simulated;
      // The blog's runs overlapped their collectives almost fully: a few
      // percent of the step is exposed.
      CHECK(run.ranks[0].exposed_comm_ms < 0.05 * *run.step_ms);
    }
  }
}

TEST_CASE("Llama 2 under FSDP: the blog's configurations fit in 80 GB, and the cheaper checkpointing would not") {
  // The blog checkpointed no block of 7b, every other block of 13b and every
  // block of 34b and 70b. The memory model says each of those fits and that
  // 13b and 34b without checkpointing do not: the choice the blog made.
  for (const Row& row : kTable) {
    const std::string name = std::string("llama2_") + row.size + "_a100";
    const std::string text = read_text(scenario_path(name));
    const auto r = scenarios::run_scenario(scenarios::parse_scenario(text, name + ".yaml"));
    CAPTURE(name);
    CHECK(static_cast<double>(r.rows[0].memory.peak()) < 80 * kGiB);
    MESSAGE(name << ": peak " << static_cast<double>(r.rows[0].memory.peak()) / kGiB << " GiB");
    const auto at = text.find("  activation_checkpointing:");
    if (at == std::string::npos) continue;
    std::string uncheckpointed = text;
    uncheckpointed.erase(at, text.find('\n', at) + 1 - at);
    const auto u = scenarios::run_scenario(scenarios::parse_scenario(uncheckpointed, name + ".yaml"));
    MESSAGE(name << " without activation checkpointing: peak " << static_cast<double>(u.rows[0].memory.peak()) / kGiB << " GiB");
    CHECK(static_cast<double>(u.rows[0].memory.peak()) > 80 * kGiB);
    CHECK(u.rows[0].run.outcome == models::Outcome::kCrash);
  }
}
