// A program outside the repository using ddpsim's public API: compiled by
// tests/api_installed.sh against the installed include/ddpsim and
// libddpsim.so only. Prints a scenario's run as `ddpsim run --json` writes
// it, then one line a row from the structures; exits with the error's code.
#include <ddpsim/ddpsim.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: api_example SCENARIO.yaml\n";
    return 2;
  }
  try {
    std::cerr << "ddpsim " << ddpsim::version() << "\n";
    const ddpsim::Scenario scenario = ddpsim::load(argv[1]);
    const ddpsim::Sweep sweep = ddpsim::run(scenario);
    std::cout << sweep.json();
    for (const ddpsim::Run& run : sweep.runs()) {
      std::printf("row W=%d step_ms=%.6f\n", run.world_size, run.step_ms.value_or(-1.0));
    }
    return 0;
  } catch (const ddpsim::Error& e) {
    std::cerr << "error " << e.exit_code() << " at " << e.file() << ":" << e.line() << ":" << e.column() << " key "
              << e.key() << ": " << e.what() << "\n";
    return e.exit_code();
  }
}
