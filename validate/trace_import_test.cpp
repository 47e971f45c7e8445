#include "validate/trace_import.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

using namespace ddpsim;

namespace {

const std::string kDir = DDPSIM_TRACES_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::string& text) {
  try {
    (void)validate::summarize(validate::parse_trace(text, "t.json"));
  } catch (const scenarios::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a torch 2.x Kineto trace: steps, backward from the AccumulateGrad ends, the ready order from their shapes") {
  const validate::Trace trace = validate::read_trace(kDir + "/tiny_kineto2x.json");
  CHECK(trace.format == "kineto");
  const validate::TraceSummary s = validate::summarize(trace);
  // The fixture's timestamps (tests/traces/tiny_kineto2x.json), step 0 at 1000.0 us:
  // first backward node 1300.5, AccumulateGrad ends 1375.5, 1384.5, 1500, 1510;
  // optimizer 100 + 20 us in step 0, 110 + 20 in step 1.
  CHECK(s.steps == 2);
  CHECK(s.delimiter == "ProfilerStep#N");
  CHECK(s.forward_ms == doctest::Approx(0.3005));
  CHECK(s.backward_ms == doctest::Approx(0.2095));
  CHECK(s.optimizer_ms == doctest::Approx(0.125));
  CHECK(s.ready_ms == std::vector<double>{0.075, 0.084, 0.1995, 0.2095});
  CHECK(s.allreduce_name == "nccl:all_reduce");
  CHECK(s.allreduce_elements == std::vector<std::int64_t>{8, 15});

  const scenarios::Scenario before = scenarios::load_scenario(kDir + "/tiny.yaml");
  const std::string written = validate::import_into_scenario(before, slurp(kDir + "/tiny.yaml"), trace, s);
  const scenarios::Scenario after = scenarios::parse_scenario(written, "imported.yaml");
  // AccumulateGrad shapes [2,3], [2], [3,4], [3]: 1.weight, 1.bias, 0.weight, 0.bias.
  CHECK(after.job.model.ready_order == std::vector<int>{2, 3, 0, 1});
  // Layer "1" ready at 0.084 ms, layer "0" 0.1255 ms later; forward 0.3005 split 1:1 as before.
  CHECK(after.job.model.backward_total().ms() == doctest::Approx(0.2095));
  CHECK(after.job.model.forward_total().ms() == doctest::Approx(0.3005));
  CHECK(after.job.model.optimizer.ms() == doctest::Approx(0.125));
  CHECK(written.find("layer's backward_ms") != std::string::npos);
}

TEST_CASE("module spans (with_stack=True): per-layer forward, and backward nodes joined by sequence number") {
  const validate::Trace trace = validate::read_trace(kDir + "/tiny_modules_kineto2x.json");
  const validate::TraceSummary s = validate::summarize(trace);
  // tests/traces/make_modules_trace.py: Sequential_0 (not a leaf) around
  // Linear_0 (60 us, its op seq 10) and Linear_1 (50 us, seq 12); the
  // backward nodes seq 12 (60 us) and seq 10 (80 us).
  REQUIRE(s.modules.size() == 2);
  CHECK(s.modules[0].name == "Linear_0");
  CHECK(s.modules[1].name == "Linear_1");
  CHECK(s.modules[0].forward_ms == doctest::Approx(0.060));
  CHECK(s.modules[1].forward_ms == doctest::Approx(0.050));
  CHECK(s.modules[0].backward_ms == doctest::Approx(0.080));
  CHECK(s.modules[1].backward_ms == doctest::Approx(0.060));
  CHECK(s.backward_nodes == 2);
  CHECK(s.joined_nodes == 2);
  CHECK(s.forward_ms == doctest::Approx(0.3005));  // the step's numbers do not change

  const scenarios::Scenario before = scenarios::load_scenario(kDir + "/tiny.yaml");
  const std::string written = validate::import_into_scenario(before, slurp(kDir + "/tiny.yaml"), trace, s);
  const scenarios::Scenario after = scenarios::parse_scenario(written, "imported.yaml");
  // Forward 0.3005 ms split 60:50 (the scenario said 1:1).
  // Per parameter: layer "0" holds parameters 0 and 1, layer "1" 2 and 3.
  const auto forward = [](const scenarios::Scenario& sc, std::size_t a, std::size_t b) {
    return sc.job.model.forward[a].ms() + sc.job.model.forward[b].ms();
  };
  CHECK(forward(after, 0, 1) == doctest::Approx(0.3005 * 60 / 110).epsilon(1e-4));
  CHECK(forward(after, 2, 3) == doctest::Approx(0.3005 * 50 / 110).epsilon(1e-4));
  CHECK(written.find("from its module's span") != std::string::npos);
  CHECK(written.find("Linear_0 0.0600 / 0.0800 ms, Linear_1 0.0500 / 0.0600 ms") != std::string::npos);

  // Spans that are not the scenario's layers (their ops take other shapes): the scenario's split stays.
  validate::TraceSummary swapped = s;
  std::swap(swapped.modules[0], swapped.modules[1]);
  const std::string kept = validate::import_into_scenario(before, slurp(kDir + "/tiny.yaml"), trace, swapped);
  const scenarios::Scenario unchanged = scenarios::parse_scenario(kept, "kept.yaml");
  CHECK(forward(unchanged, 0, 1) == doctest::Approx(0.3005 / 2).epsilon(1e-4));
  CHECK(kept.find("2 leaf module spans are not the scenario's 2 layers") != std::string::npos);
}

TEST_CASE("Debian's torch 1.13 (no Kineto): the legacy array, delimited by DDP's forward") {
  const validate::Trace trace = validate::read_trace(kDir + "/mlp_torch113_cpu.json");
  CHECK(trace.format == "legacy autograd profiler");
  const validate::TraceSummary s = validate::summarize(trace);
  CHECK(s.steps == 2);
  CHECK(s.delimiter == "DistributedDataParallel.forward");
  CHECK(s.ready_ms.size() == 6);
  CHECK(s.ready_shapes.empty());
  CHECK(s.allreduce_name == "gloo:all_reduce");
  CHECK(s.backward_ms == doctest::Approx(s.ready_ms.back()));
  const scenarios::Scenario mlp = scenarios::load_scenario(kDir + "/mlp.yaml");
  const scenarios::Scenario after =
      scenarios::parse_scenario(validate::import_into_scenario(mlp, slurp(kDir + "/mlp.yaml"), trace, s), "x.yaml");
  CHECK(after.job.model.ready_order == mlp.job.model.ready_order);  // no shapes: the scenario's order
  CHECK(after.job.model.backward_total().ms() == doctest::Approx(s.backward_ms).epsilon(1e-5));
}

TEST_CASE("malformed traces: located errors") {
  CHECK(error_of("[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1,\n  \"dur\": }]").find("t.json:2:10: expected a Chrome trace (JSON)") == 0);
  CHECK(error_of("[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2},\n {\"name\": \"b\", \"ph\": \"X\", \"ts\": 1, \"dur\": -2}]")
            .find("t.json:2:2: key 'dur': value -2: expected a number of microseconds") == 0);
  CHECK(error_of("{\"traceEvents\": [\n 7]}").find("t.json:2:2: key 'traceEvents': value 7: expected an event object") == 0);
  CHECK(error_of("{\"events\": []}").find("expected a Chrome trace: an array of events") != std::string::npos);
  // A hostile shape is no tensor's size: unknown, not an overflow.
  const validate::TraceSummary huge = validate::summarize(validate::parse_trace(
      "[{\"name\": \"DistributedDataParallel.forward\", \"ph\": \"X\", \"ts\": 0, \"dur\": 1},"
      " {\"name\": \"torch::autograd::AccumulateGrad\", \"ph\": \"X\", \"ts\": 2, \"dur\": 1},"
      " {\"name\": \"gloo:all_reduce\", \"ph\": \"X\", \"ts\": 3, \"dur\": 1,"
      "  \"args\": {\"Input Dims\": [[4611686018427387904, 4611686018427387904]]}}]",
      "t.json"));
  CHECK(huge.allreduce_elements == std::vector<std::int64_t>{-1});
  // torch 2.x records a TensorList input as a list of shapes (c10d::allreduce_'s [[[85002]]]).
  const validate::Trace listed = validate::parse_trace(
      "[{\"name\": \"c10d::allreduce_\", \"ph\": \"X\", \"ts\": 0, \"dur\": 1,"
      "  \"args\": {\"Input Dims\": [[[85002], [3, 4]], [], []]}}]",
      "t.json");
  CHECK(listed.events.at(0).input_dims == std::vector<std::vector<std::int64_t>>{{85002}, {3, 4}, {}, {}});
  CHECK(error_of("[{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2, \"args\": {\"Input Dims\": [[[1], 2]]}}]")
            .find("key 'args.Input Dims'") != std::string::npos);
  CHECK(error_of("[{\"name\": \"DistributedDataParallel.forward\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2}]")
            .find("expected a backward in every step") != std::string::npos);
}
