// libFuzzer target: a scenario file, as `ddpsim check FILE` reads it
// (scenarios::load_scenario). Bad input must be an InputError (exit code
// 2); a crash, a hang, runaway memory or any other exception is a finding.

#include <cstdint>
#include <exception>

#include "fuzz/fuzz_file.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = ddpsim::fuzz::write_input(data, size, "scenario.yaml");
  try {
    (void)ddpsim::scenarios::load_scenario(path);
  } catch (const ddpsim::scenarios::InputError&) {
    // refused with a located message: what bad input should get
  } catch (const std::exception& e) {
    ddpsim::fuzz::finding(std::string("load_scenario threw something other than InputError: ") + e.what());
  }
  return 0;
}
