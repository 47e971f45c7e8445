#pragma once
// The scenario schema, declared once: for every key of a scenario file (and
// of a calibration file) its path, type, unit, range, default and meaning.
// The loader takes each mapping's allowed keys (and so its "did you mean")
// from here, and docs/scenario-format.md's key tables are generated from it
// (`ddpsim_schema_doc`; the ctest docs.scenario_schema fails on drift).
//
// Paths: "training.iterations"; a list's items are "model.parameters[]"
// and their keys "model.parameters[].name". A key whose type is kMapping
// or kList of mappings is a section: its children are the keys one level
// below it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddpsim::scenarios::schema {

enum class Type {
  kMapping,         ///< a section: a mapping of the keys below it
  kList,            ///< a list of mappings (their keys below "path[]")
  kNameList,        ///< a list of names (parameters)
  kInteger,
  kIntegerOrList,   ///< an integer, or a non-empty list of distinct ones
  kIntegerList,     ///< a list of integers
  kNumber,
  kNumberOrList,    ///< a number, or a non-empty list of distinct ones
  kBool,
  kChoice,          ///< one of the words in `range`
  kChoiceOrMapping, ///< one of the words in `range`, or a section whose `name` is one
  kString,
  kPath,
};

/// A numeric key's bounds, as its `range` declares them (see Key::range).
struct Bounds {
  double lo = 0;
  bool lo_open = false;  ///< lo itself excluded
  double hi = 0;         ///< inclusive; +infinity for ">= lo" and "> lo"
};

/// One key of a file format. A numeric key's `range` is the one declaration
/// of its bounds, which the loader enforces (schema::bounds): "lo..hi"
/// (inclusive), "(lo, hi]" (lo excluded), ">= lo" or "> lo"; numbers may be
/// written 10,000,000, 1e6 or 2^40. A note may follow after "; " or ", ".
/// A range that depends on other keys ("0..iterations-1") is no declaration:
/// the loader checks it in code, and the text says it.
struct Key {
  std::string_view path;
  Type type;
  std::string_view unit;     ///< "ms", "MiB", ... ("" for none)
  std::string_view range;    ///< "1..10,000,000", "> 0", or the choices
  std::string_view fallback; ///< the default, "**required**" or "none"
  std::string_view meaning;  ///< one line
};

/// One kind of fault: its `type` value, the keys it takes, what it does.
struct FaultKind {
  std::string_view type;
  std::vector<std::string_view> keys;  ///< besides `type`; `rank` first where taken
  std::string_view keys_text;          ///< the keys with their ranges and defaults, for the doc
  std::string_view meaning;
};

/// The scenario's keys, in the order the doc lists them.
const std::vector<Key>& scenario_keys();
/// A calibration file's keys (`ddpsim calibrate --out`).
const std::vector<Key>& calibration_keys();
/// A model preset's keys (models/presets/*.yaml).
const std::vector<Key>& preset_keys();
/// The fault kinds, in FaultType's order.
const std::vector<FaultKind>& fault_kinds();
/// The fault kind named `type`; nullptr if none.
const FaultKind* fault_kind(std::string_view type);
/// Every key any fault kind takes, in the schema's order.
std::vector<std::string_view> fault_keys();

/// The names of the keys directly under `section` ("" for the top level,
/// "model.parameters[]" for a list's items) in `keys`, in declared order.
std::vector<std::string_view> children(const std::vector<Key>& keys, std::string_view section);
/// The choices of a kChoice key ("nccl, gloo" -> {"nccl", "gloo"}).
std::vector<std::string_view> choices(const std::vector<Key>& keys, std::string_view path);
/// The key at `path`; throws std::logic_error if none is declared.
const Key& key(const std::vector<Key>& keys, std::string_view path);

/// The bounds `range` declares; none when it depends on other keys (or is no range).
std::optional<Bounds> bounds(std::string_view range);

/// docs/scenario-format.md's generated part: the key tables in Markdown.
std::string markdown();

}  // namespace ddpsim::scenarios::schema
