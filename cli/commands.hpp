#pragma once
// The ddpsim command line: `ddpsim run`, `ddpsim check`.

namespace ddpsim::cli {

/// Parses and runs one command. Returns the exit code: 0 the simulation ran
/// (whatever it predicts, a hang too), 2 invalid input or usage, 1 internal error.
int main(int argc, char** argv);

}  // namespace ddpsim::cli
