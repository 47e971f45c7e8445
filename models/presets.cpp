#include "models/presets.hpp"

#include <algorithm>
#include <utility>

namespace ddpsim::models {
namespace {

constexpr std::pair<std::string_view, std::string_view> kPresets[] = {
#include "presets_data.inc"
};

}  // namespace

std::optional<std::string_view> preset_yaml(std::string_view name) {
  for (const auto& [n, text] : kPresets) {
    if (n == name) return text;
  }
  return std::nullopt;
}

std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> out;
  for (const auto& p : kPresets) out.push_back(p.first);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ddpsim::models
