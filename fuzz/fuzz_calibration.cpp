// libFuzzer target: a calibration file (`ddpsim calibrate --out`, read by
// `ddpsim validate --calibration` through scenarios::apply_calibration),
// applied to the CPU MLP scenario, whose layer names a calibration may
// carry. Bad input must be an InputError; anything else is a finding.

#include <cstdint>
#include <exception>

#include "fuzz/fuzz_file.hpp"
#include "loader/input_error.hpp"
#include "loader/calibration_file.hpp"
#include "loader/scenario.hpp"

#ifndef DDPSIM_FUZZ_BASE_SCENARIO
#error "DDPSIM_FUZZ_BASE_SCENARIO names the scenario calibrations are applied to"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ddpsim::scenarios::Scenario base = ddpsim::scenarios::load_scenario(DDPSIM_FUZZ_BASE_SCENARIO);
  const std::string path = ddpsim::fuzz::write_input(data, size, "calibration.yaml");
  ddpsim::scenarios::Scenario scenario = base;
  try {
    ddpsim::scenarios::apply_calibration(scenario, path);
  } catch (const ddpsim::scenarios::InputError&) {
    // refused with a located message
  } catch (const std::exception& e) {
    ddpsim::fuzz::finding(std::string("apply_calibration threw something other than InputError: ") + e.what());
  }
  return 0;
}
