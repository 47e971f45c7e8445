#pragma once
// Variants of a scenario: its file's keys changed, the result loaded and
// validated exactly as a file holding it would be. ddpsim advise builds
// the configurations it compares this way (advise/advisor.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

/// One key set (`value`: YAML text, "100" or "[model.layers.*]") or
/// removed (no value), by its dotted path ("ddp.bucket_cap_mb"); missing
/// mappings on the way are created.
struct KeyEdit {
  std::string key;
  std::optional<std::string> value;
};

/// The scenario `text` (loaded from `source`) with `edits` applied in
/// order, as YAML text: what a user would write to run that variant.
std::string edited_text(std::string_view text, const std::string& source, const std::vector<KeyEdit>& edits);

/// parse_scenario of edited_text; its errors name `source` and the edits.
Scenario parse_variant(std::string_view text, const std::string& source, const std::vector<KeyEdit>& edits);

/// Reads a scenario file's text (the limits load_scenario applies).
std::string read_scenario_text(const std::string& path);

}  // namespace ddpsim::scenarios
