// libFuzzer target: nccl-tests output as `ddpsim collectives --measured FILE`
// and `ddpsim calibrate --nccl-tests FILE` take it (validate/nccl_tests.hpp),
// on the DGX A100 scenario. The commands must exit 0 or 2 (bad input); 1 (an
// internal error), a crash, a hang or runaway memory is a finding.

#include <cstdint>
#include <string>

#include "cli/commands.hpp"
#include "fuzz/fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = ddpsim::fuzz::write_input(data, size, "all_reduce_perf.txt");
  const std::string scenario = DDPSIM_FUZZ_NCCL_SCENARIO;
  for (const char* cmd : {"collectives", "calibrate"}) {
    const bool collectives = std::string(cmd) == "collectives";
    std::string args[] = {"ddpsim", cmd, collectives ? scenario : "--scenario", collectives ? "--measured" : scenario,
                          collectives ? path : "--nccl-tests", collectives ? "" : path};
    char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), args[4].data(), args[5].data()};
    const int rc = ddpsim::cli::main(collectives ? 5 : 6, argv);
    if (rc != 0 && rc != 2) ddpsim::fuzz::finding(std::string("ddpsim ") + cmd + " exited " + std::to_string(rc));
  }
  return 0;
}
