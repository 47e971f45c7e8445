#pragma once
// The three renderings of a sweep: a table for people, CSV, and JSON.

#include <ostream>
#include <string>

#include "scenarios/runner.hpp"

namespace ddpsim::scenarios {

/// The scaling table, then who waits where for any run that hung.
void write_table(std::ostream& out, const Scenario& scenario, const SweepResult& result);
void write_csv(std::ostream& out, const SweepResult& result);
/// The machine-readable result (format: docs/scenario-format.md#json-result).
std::string to_json(const Scenario& scenario, const SweepResult& result);

}  // namespace ddpsim::scenarios
