// libFuzzer target: a scenario loaded and run, as `ddpsim run FILE --json`
// does, with the work bounded (a budget of 2e5 rank-operations and 256 MB:
// past it the run is refused, as ddpsim run refuses past its own). What only
// a run reaches is fuzzed here: the times the models form (an overflow must
// be refused, never a number), the engine, the table and the JSON. Bad input
// must be an InputError (exit 2); a crash, a hang, runaway memory or any
// other exception is a finding.

#include <cstdint>
#include <exception>
#include <sstream>

#include "fuzz/fuzz_file.hpp"
#include "netsim/simgrid_engine.hpp"
#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"
#include "sweep/work_estimate.hpp"
#include "sim/time.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sc = ddpsim::scenarios;
  const std::string path = ddpsim::fuzz::write_input(data, size, "run.yaml");
  try {
    const sc::Scenario s = sc::load_scenario(path);
    if (s.engine == "simgrid" && !ddpsim::netsim::simgrid_available()) return 0;  // ddpsim run refuses it
    sc::check_budget(s, sc::estimate_work(s, 0, true), sc::WorkBudget{2e5, 0.256});
    const sc::SweepResult r = sc::run_scenario(s);
    std::ostringstream out;
    ddpsim::report::write_table(out, s, r);
    out << ddpsim::report::to_json(s, r);
  } catch (const sc::InputError&) {
    // refused with a located message: what bad input should get
  } catch (const ddpsim::sim::TimeRangeError&) {
    // refused (ddpsim exits 2 naming the quantity and its keys)
  } catch (const std::exception& e) {
    ddpsim::fuzz::finding(std::string("a run threw something other than InputError: ") + e.what());
  }
  return 0;
}
