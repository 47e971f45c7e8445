// ddpsim::load, load_text and the Scenario handle (include/ddpsim/ddpsim.hpp).

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

#include "api/api_data.hpp"
#include "models/fsdp.hpp"
#include "loader/input_error.hpp"
#include "loader/variant.hpp"

namespace ddpsim {
namespace {

Scenario parsed(std::string text, const std::string& source) {
  auto data = std::make_shared<ScenarioData>();
  data->scenario = scenarios::parse_scenario(text, source);
  data->text = std::move(text);
  return Scenario(std::move(data));
}

// One JSON value as YAML: mappings and sequences in block style, strings
// double-quoted (a string stays a string), numbers as JSON writes them.
void emit(YAML::Emitter& out, const nlohmann::json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, value] : v.items()) {
      out << YAML::Key << key << YAML::Value;
      emit(out, value);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : v) emit(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    out << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();  // numbers (shortest round trip) and booleans
  }
}

// A YAML node as JSON: a scalar is an integer, a number, a boolean or null
// when it reads as one (YAML 1.2's core schema), else a string.
nlohmann::ordered_json yaml_as_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_as_json(kv.second);
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& item : n) a.push_back(yaml_as_json(item));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted in the text: a string
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "false") return s == "true";
  const nlohmann::ordered_json number = nlohmann::ordered_json::parse(s, nullptr, false);
  if (number.is_number()) return number;
  return s;
}

}  // namespace

Scenario load(const std::string& path) {
  return api::guarded([&] { return parsed(scenarios::read_scenario_text(path), path); });
}

Scenario load_text(const std::string& text, const std::string& source) {
  return api::guarded([&] { return parsed(text, source); });
}

std::string json_to_yaml(const std::string& json) {
  return api::guarded([&] {
    const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      throw Error(ErrorKind::kBadInput, "a scenario built in code: expected a mapping of its sections (a dict)");
    }
    YAML::Emitter out;
    emit(out, doc);
    return std::string(out.c_str()) + "\n";
  });
}

const std::string& Scenario::name() const { return data_->scenario.name; }
const std::string& Scenario::text() const { return data_->text; }
const std::string& Scenario::source() const { return data_->scenario.source; }
std::vector<int> Scenario::world_sizes() const { return data_->scenario.sweep.world_sizes; }
const std::string& Scenario::engine() const { return data_->scenario.engine; }

std::string Scenario::program() const {
  const scenarios::Scenario& s = data_->scenario;
  if (s.parallelism != scenarios::Parallelism::kFsdp || !s.fsdp) return "DDP";
  return std::string(models::to_string(s.fsdp->sharding));
}

std::string Scenario::to_json() const {
  return api::guarded([&] { return yaml_as_json(YAML::Load(data_->text)).dump(2) + "\n"; });
}

}  // namespace ddpsim
