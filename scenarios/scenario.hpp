#pragma once
// A scenario: one YAML file, loaded once into an immutable, validated value.
// Every key, its unit and its default: docs/scenario-format.md.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/ddp_job.hpp"

namespace ddpsim::scenarios {

struct Scenario {
  std::string name;               ///< `name`, or the file's stem
  std::string source;             ///< the path it was loaded from
  std::uint64_t seed = 0;
  std::vector<int> world_sizes;   ///< one row of results per entry, in file order
  models::DdpJob job;
};

/// Reads and validates a scenario file. Throws InputError on any problem.
Scenario load_scenario(const std::string& path);
/// Validates scenario text; `source` names it in error messages.
Scenario parse_scenario(std::string_view text, const std::string& source);

/// Limits on a scenario file, so that hostile input fails fast and cleanly.
inline constexpr std::size_t kMaxScenarioBytes = 1 << 20;
inline constexpr std::size_t kMaxLineBytes = 4096;
inline constexpr int kMaxWorldSize = 1 << 20;

}  // namespace ddpsim::scenarios
