// docs/scenario-format.md's key tables, generated from the schema
// (schema.cpp). The ctest docs.scenario_schema compares the committed doc
// with this output; scripts/gen_docs.sh rewrites it.

#include <fmt/format.h>

#include <string>

#include "loader/schema.hpp"

namespace ddpsim::scenarios::schema {
namespace {

std::string with_unit(std::string text, std::string_view unit) {
  if (!unit.empty()) text += fmt::format(", {}", unit);
  return text;
}

std::string quoted_choices(std::string_view range) {
  std::string out;
  while (!range.empty()) {
    const std::size_t comma = range.find(", ");
    if (!out.empty()) out += ", ";
    out += fmt::format("`{}`", range.substr(0, comma));
    if (comma == std::string_view::npos) break;
    range.remove_prefix(comma + 2);
  }
  return out;
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// The "type, unit" cell: the type, its range, its unit.
std::string type_cell(const std::vector<Key>& keys, const Key& k) {
  const std::string range = k.range.empty() ? "" : " " + std::string(k.range);
  switch (k.type) {
    case Type::kMapping: return "mapping";
    case Type::kList: {
      const std::vector<std::string_view> items = children(keys, std::string(k.path) + "[]");
      return items.empty() ? "list of mappings" : fmt::format("list of `{{{}}}`", joined(items));
    }
    case Type::kNameList:
      return (k.range.starts_with("module") ? "list of names" : "list of parameter names") +
             (k.range.empty() ? "" : ", " + std::string(k.range));
    case Type::kInteger: return with_unit("integer" + range, k.unit);
    case Type::kIntegerOrList: return with_unit("integer" + range + ", or a non-empty list of distinct ones", k.unit);
    case Type::kIntegerList: return std::string(k.range);
    case Type::kNumber: return with_unit("number" + range, k.unit);
    case Type::kNumberOrList: return with_unit("number" + range, k.unit) + ", or a list of distinct ones";
    case Type::kBool: return "bool";
    case Type::kChoice: return quoted_choices(k.range);
    case Type::kChoiceOrMapping: return quoted_choices(k.range) + ", or a mapping";
    case Type::kString: return "string" + (k.range.empty() ? "" : ", " + std::string(k.range));
    case Type::kPath: return "path" + (k.range.empty() ? "" : ", " + std::string(k.range));
  }
  return "";
}

bool under(std::string_view path, std::string_view section) {
  return path == section || (path.size() > section.size() && path.substr(0, section.size()) == section &&
                             (path[section.size()] == '.' || path[section.size()] == '['));
}

std::string table(const std::vector<Key>& keys, const std::vector<std::string_view>& only,
                  const std::vector<std::string_view>& except) {
  std::string out = "| key | type, unit | default | meaning |\n|-----|-----------|---------|---------|\n";
  for (const Key& k : keys) {
    bool take = only.empty();
    for (std::string_view s : only) take = take || under(k.path, s);
    for (std::string_view s : except) take = take && !under(k.path, s);
    if (!take) continue;
    out += fmt::format("| `{}` | {} | {} | {} |\n", k.path, type_cell(keys, k), k.fallback, k.meaning);
  }
  return out;
}

}  // namespace

std::string markdown() {
  std::string out = table(scenario_keys(), {}, {"faults", "checkpoint", "failures"});
  out += "\n`faults` is a list; each fault has a `type` and, except `rank0_artifact`,\n"
         "a `rank` (an integer below the smallest world size, or a list). Iterations\n"
         "are global (see `training.epochs`).\n\n"
         "| type | keys | what the rank does |\n|------|------|--------------------|\n";
  for (const FaultKind& f : fault_kinds()) out += fmt::format("| `{}` | {} | {} |\n", f.type, f.keys_text, f.meaning);
  out += "\nEach fault's keys (`faults[]`):\n\n" + table(scenario_keys(), {"faults[]"}, {});
  out += "\n`checkpoint` and `failures` price failures and restarts (derivations:\n"
         "docs/cost-models.md#failures-and-restart):\n\n" +
         table(scenario_keys(), {"checkpoint", "failures"}, {});
  out += "\nA calibration file (`calibration:`, `ddpsim calibrate --out`, `ddpsim validate --calibration`):\n"
         "each value given replaces the scenario's.\n\n" +
         table(calibration_keys(), {}, {});
  return out;
}

}  // namespace ddpsim::scenarios::schema
