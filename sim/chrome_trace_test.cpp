#include "sim/chrome_trace.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace ddpsim::sim;

TEST_CASE("the trace is valid JSON with a process per rank and a track per stream") {
  std::ostringstream out;
  {
    ChromeTraceWriter trace(out, [](OpLabel l) { return l.tag == 0 ? "compute" : "all_reduce"; });
    Engine e(2, [](const Collective&, int) { return Time::from_us(1.5); });
    e.add_observer(trace);
    trace.begin_run("W=2", 2);
    for (int r = 0; r < 2; ++r) {
      const OpRef c = e.enqueue(r, StreamKind::kCompute, Time::ns(1234 * (r + 1)), {0, 0});
      e.enqueue_collective(r, Engine::kWorld, {CollectiveKind::kAllReduce, 16}, {1, 0}, c);
    }
    e.run();
  }
  const auto doc = nlohmann::json::parse(out.str());
  const auto& events = doc.at("traceEvents");
  int complete = 0, names = 0;
  for (const auto& ev : events) {
    if (ev.at("ph") == "X") {
      ++complete;
      if (ev.at("name") == "all_reduce (16 B, seq 0)") {
        CHECK(ev.at("ts").get<double>() == doctest::Approx(2.468));
        CHECK(ev.at("dur").get<double>() == doctest::Approx(1.5));
        CHECK(ev.at("args").at("bytes") == 16);
      }
    } else if (ev.at("name") == "process_name") {
      ++names;
    }
  }
  CHECK(complete == 4);
  CHECK(out.str().find("\"name\":\"all_reduce (16 B, seq 0)\"") != std::string::npos);
  CHECK(names == 2);
}

TEST_CASE("a run's memory function becomes a counter track per rank") {
  std::ostringstream out;
  {
    ChromeTraceWriter trace(out, [](OpLabel) { return "compute"; });
    Engine e(2, [](const Collective&, int) { return Time::from_us(1); });
    e.add_observer(trace);
    // 1.5 MiB while op 0 runs, nothing said for op 1.
    trace.begin_run("W=2", 2, [](const OpRecord& r) -> std::optional<std::int64_t> {
      if (r.label.index == 0) return 3 * 512 * 1024;
      return std::nullopt;
    });
    for (int r = 0; r < 2; ++r) {
      const OpRef a = e.enqueue(r, StreamKind::kCompute, Time::from_us(2), {0, 0, 0});
      e.enqueue(r, StreamKind::kCompute, Time::from_us(2), {0, 0, 1}, a);
    }
    e.run();
  }
  const auto doc = nlohmann::json::parse(out.str());
  int counters = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "C") continue;
    ++counters;
    CHECK(ev.at("name") == "memory");
    CHECK(ev.at("ts").get<double>() == doctest::Approx(0.0));
    CHECK(ev.at("args").at("MiB").get<double>() == doctest::Approx(1.5));
  }
  CHECK(counters == 2);
  CHECK(out.str().find("\"MiB\":1.500") != std::string::npos);
}
