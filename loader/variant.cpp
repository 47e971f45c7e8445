#include "loader/variant.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "loader/scenario_sections.hpp"
#include "loader/yaml_section.hpp"

namespace ddpsim::scenarios {
namespace {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', at)) {
    parts.push_back(key.substr(at, dot - at));
    at = dot + 1;
  }
  parts.push_back(key.substr(at));
  return parts;
}

void apply(YAML::Node root, const KeyEdit& edit) {
  const std::vector<std::string> parts = split_key(edit.key);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node[parts[i]] || !node[parts[i]].IsMap()) {
      if (!edit.value) return;  // removing under a mapping that is not there: nothing to do
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    }
    node.reset(node[parts[i]]);  // rebinds; `node = ...` would overwrite what node refers to
  }
  if (edit.value) {
    node[parts.back()] = YAML::Load(*edit.value);
  } else {
    node.remove(parts.back());
  }
}

std::string describe(const std::vector<KeyEdit>& edits) {
  std::string out;
  for (const KeyEdit& e : edits) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", e.key, e.value.value_or("(removed)"));
  }
  return out;
}

}  // namespace

std::string edited_text(std::string_view text, const std::string& source, const std::vector<KeyEdit>& edits) {
  YAML::Node root = parse_yaml(text, source);
  for (const KeyEdit& e : edits) apply(root, e);
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

Scenario parse_variant(std::string_view text, const std::string& source, const std::vector<KeyEdit>& edits) {
  if (edits.empty()) return parse_scenario(text, source);
  return parse_scenario(edited_text(text, source, edits), fmt::format("{} with {}", source, describe(edits)));
}

std::string read_scenario_text(const std::string& path) { return read_limited(path, "scenario file"); }

}  // namespace ddpsim::scenarios
