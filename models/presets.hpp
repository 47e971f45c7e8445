#pragma once
// Model presets (models/presets/*.yaml), compiled into the binary. Each is
// the parameter list, gradient-ready order and buffers PyTorch reports for
// that model (scripts/extract_presets.py); the scenario loader parses them.

#include <optional>
#include <string_view>
#include <vector>

namespace ddpsim::models {

/// The YAML text of a preset, by name ("resnet50"), if there is one.
std::optional<std::string_view> preset_yaml(std::string_view name);
/// Every preset name, sorted.
std::vector<std::string_view> preset_names();

}  // namespace ddpsim::models
