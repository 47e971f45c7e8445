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
