// The public API (include/ddpsim/ddpsim.hpp): errors as one type with the
// exit code and location, progress and cancellation, structures built in
// code, and rows as the JSON has them.

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "api/api_data.hpp"
#include "ddpsim/ddpsim.hpp"
#include "sim/time.hpp"

namespace {

const char* kLab = R"(name: lab
world_size: [1, 2, 4, 8]
training: {iterations: 3}
model: {forward_ms: 40, backward_ms: 80, gradient_bytes: 4000000}
collective: {latency_us: 180, bandwidth_GBps: 25, launch_overhead_us: 50}
)";

ddpsim::Error caught(const std::function<void()>& body) {
  try {
    body();
  } catch (const ddpsim::Error& e) {
    return e;
  }
  FAIL("no ddpsim::Error thrown");
  return {ddpsim::ErrorKind::kInternal, ""};
}

}  // namespace

TEST_CASE("bad input is a ddpsim::Error with the exit code, the file, line, column and key") {
  const ddpsim::Error e = caught([] { ddpsim::load_text("name: x\nworld_size: [2]\ntraining: {iterations: -1}\n", "s.yaml"); });
  CHECK(e.kind() == ddpsim::ErrorKind::kBadInput);
  CHECK(e.exit_code() == 2);
  CHECK(e.file() == "s.yaml");
  CHECK(e.line() == 3);
  CHECK(e.column() > 0);
  CHECK(e.key() == "training.iterations");
  CHECK(std::string(e.what()).rfind("s.yaml:3:", 0) == 0);
  const ddpsim::Error missing = caught([] { ddpsim::load("no/such/scenario.yaml"); });
  CHECK(missing.exit_code() == 2);
  const ddpsim::Error engine = caught([] {
    ddpsim::RunOptions o;
    o.engine = "ns3";
    ddpsim::run(ddpsim::load_text(kLab), o);
  });
  CHECK(engine.key() == "engine");
}

TEST_CASE("every other exception becomes the command line's class of error") {
  const auto kind = [](auto thrown) {
    try {
      throw thrown;
    } catch (...) {
      return ddpsim::api::translate(std::current_exception()).kind();
    }
  };
  CHECK(kind(ddpsim::sim::TimeRangeError("a duration", 1e30)) == ddpsim::ErrorKind::kBadInput);
  CHECK(kind(std::bad_alloc()) == ddpsim::ErrorKind::kBadInput);
  CHECK(kind(std::filesystem::filesystem_error("read", std::make_error_code(std::errc::permission_denied))) ==
        ddpsim::ErrorKind::kBadInput);
  CHECK(kind(ddpsim::scenarios::Cancelled()) == ddpsim::ErrorKind::kCancelled);
  CHECK(kind(std::logic_error("a bug")) == ddpsim::ErrorKind::kInternal);
}

TEST_CASE("progress hears of every run, one at a time, and false cancels the rest") {
  std::vector<std::size_t> done;
  ddpsim::RunOptions o;
  o.threads = 2;
  o.progress = [&done](const ddpsim::Progress& p) {
    done.push_back(p.done);
    CHECK(p.total == 4);
    return true;
  };
  const ddpsim::Sweep all = ddpsim::run(ddpsim::load_text(kLab), o);
  CHECK(done == std::vector<std::size_t>{1, 2, 3, 4});
  CHECK(all.runs().size() == 4);
  int calls = 0;
  o.threads = 1;
  o.progress = [&calls](const ddpsim::Progress&) { return ++calls < 2; };
  const ddpsim::Error e = caught([&o] { ddpsim::run(ddpsim::load_text(kLab), o); });
  CHECK(e.kind() == ddpsim::ErrorKind::kCancelled);
  CHECK(calls == 2);  // the third and fourth runs never started
}

TEST_CASE("a run's rows are the JSON's, and a structure built in code runs the same") {
  const ddpsim::Scenario s = ddpsim::load_text(kLab, "lab.yaml");
  const ddpsim::Sweep r = ddpsim::run(s);
  const auto doc = nlohmann::json::parse(r.json());
  REQUIRE(doc["runs"].size() == r.runs().size());
  for (std::size_t i = 0; i < r.runs().size(); ++i) {
    const ddpsim::Run& run = r.runs()[i];
    CHECK(doc["runs"][i]["world_size"] == run.world_size);
    CHECK(doc["runs"][i]["step_ms"].get<double>() == *run.step_ms);
    CHECK(doc["runs"][i]["closed_form_step_ms"].get<double>() == run.closed_form_step_ms);
    CHECK(doc["runs"][i]["efficiency"].get<double>() == *run.efficiency);
  }
  // The scenario as JSON, written back as YAML: the same runs.
  const ddpsim::Scenario again = ddpsim::load_text(ddpsim::json_to_yaml(s.to_json()), "<dict>");
  const ddpsim::Sweep r2 = ddpsim::run(again);
  REQUIRE(r2.runs().size() == r.runs().size());
  for (std::size_t i = 0; i < r.runs().size(); ++i) CHECK(r2.runs()[i].step_ms == r.runs()[i].step_ms);
  CHECK(again.world_sizes() == std::vector<int>{1, 2, 4, 8});
  CHECK(again.program() == "DDP");
  // A string stays a string: "1" is not read as the number 1.
  CHECK(ddpsim::json_to_yaml(R"({"name": "1"})") == "name: \"1\"\n");
  CHECK(caught([] { ddpsim::json_to_yaml("[1, 2]"); }).exit_code() == 2);
}

TEST_CASE("memory rows add up to the peak, and all_fit follows the device") {
  const ddpsim::MemoryReport m = ddpsim::memory(ddpsim::load_text(kLab), 8);
  REQUIRE(m.rows.size() == 1);
  const ddpsim::MemoryRow& row = m.rows[0];
  CHECK(row.world_size == 8);
  CHECK(row.peak == row.parameters + row.gradients + row.optimizer_states + row.buckets + row.unsharded + row.activations);
  CHECK_FALSE(row.fits.has_value());
  CHECK(m.all_fit());
}

TEST_CASE("buckets are DDP's, initial and rebuilt, and hold every gradient byte") {
  const ddpsim::BucketReport b = ddpsim::buckets(ddpsim::load_text(kLab));
  REQUIRE_FALSE(b.initial.empty());
  std::int64_t bytes = 0;
  for (const ddpsim::Bucket& bucket : b.initial) bytes += bucket.bytes;
  CHECK(bytes == 4000000);
  CHECK(b.text.find("bucket") != std::string::npos);
}
