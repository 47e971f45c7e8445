#pragma once
// The SimGrid engine's link statistics in a report: every link's bytes per
// step and busy share in the JSON, the five busiest in the text.

#include <ostream>

#include <nlohmann/json.hpp>

#include "models/run_result.hpp"
#include "sweep/runner.hpp"

namespace ddpsim::report {

/// How many links the text names per row.
inline constexpr std::size_t kBusiestLinks = 5;

/// A run's "links": each link direction by name, its capacity, bytes per step and busy share.
nlohmann::ordered_json links_json(const models::RunResult& run);
/// The busiest links of each row that has link statistics, a line a row (nothing when none has).
void write_busiest_links(std::ostream& out, const scenarios::SweepResult& result);

}  // namespace ddpsim::report
