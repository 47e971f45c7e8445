#pragma once
// The scenario loader's YAML layer: a file's text checked before yaml-cpp
// sees it, parsed into one document, and read one mapping at a time
// (Section), each value checked for type, range and finiteness, each
// mapping for unknown and duplicate keys, every error located by file,
// line and column. Internal to scenarios/: the loaders of scenarios and
// calibration files use it; nothing outside this folder includes it.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loader/input_error.hpp"
#include "loader/schema.hpp"
#include "sim/time.hpp"

namespace ddpsim::scenarios {

/// Levenshtein distance, for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);
/// A node as an error message shows it: 'value', (a mapping), (nothing)...
std::string describe(const YAML::Node& n);
/// "a, b, c".
std::string join(const std::vector<std::string_view>& names);


class Reader;

// One mapping of the scenario, checked against the keys it may hold.
class Section {
 public:
  Section(const Reader& reader, YAML::Node node, std::string path, Location where,
          std::vector<std::string_view> allowed);
  /// A file's top level, its keys (and every child's) from `keys`, which outlives it.
  Section(const Reader& reader, YAML::Node node, const std::vector<schema::Key>& keys);

  bool has(std::string_view key) const { return entries_.count(std::string(key)) != 0; }
  std::string path_of(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;
  [[noreturn]] void fail_value(std::string_view key, const std::string& expected) const;
  [[noreturn]] void missing(std::string_view key, const std::string& expected) const;
  /// Rejects a present key that does not apply, with the reason.
  void forbid(std::string_view key, const std::string& why) const {
    if (has(key)) fail(key, why);
  }

  Section child(std::string_view key, std::vector<std::string_view> allowed) const;
  /// The mapping under `key`, its allowed keys from the schema.
  Section child(std::string_view key) const;
  const YAML::Node& value(std::string_view key) const { return entries_.at(std::string(key)).value; }

  // Numbers: the bounds are the schema's, declared once in the key's range
  // (schema::bounds) and named with its unit in errors. The overloads that
  // take bounds are for ranges that depend on other keys; they must lie
  // inside the schema's declared range where it declares one.
  std::int64_t integer(std::string_view key, std::optional<std::int64_t> fallback) const;
  std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi,
                       std::optional<std::int64_t> fallback) const;
  double number(std::string_view key, std::optional<double> fallback) const;
  double number(std::string_view key, schema::Bounds within, std::optional<double> fallback) const;
  /// A span in milliseconds (microseconds), within the schema's range.
  sim::Time millis(std::string_view key, std::optional<double> fallback) const;
  sim::Time micros(std::string_view key, std::optional<double> fallback) const;
  std::string choice(std::string_view key, std::vector<std::string_view> options,
                     std::optional<std::string_view> fallback) const;
  /// One of the schema's choices for `key`.
  std::string choice(std::string_view key, std::optional<std::string_view> fallback) const;
  std::string text(std::string_view key, std::string fallback) const;
  bool boolean(std::string_view key, bool fallback) const;
  /// The sequence under `key` (empty if absent), checked to be a sequence.
  std::vector<YAML::Node> sequence(std::string_view key) const;
  /// A mapping inside a sequence, at `path` ("model.parameters[3]").
  Section item(const YAML::Node& n, std::string path, std::vector<std::string_view> allowed) const;
  /// Item `index` of the list under `key`, its keys from the schema.
  Section item(const YAML::Node& n, std::string_view key, std::size_t index) const;
  /// A list of strings under `key`, each checked to be a plain scalar.
  std::vector<std::pair<std::string, YAML::Node>> strings(std::string_view key) const;
  [[noreturn]] void fail_node(const YAML::Node& n, const std::string& key_path, const std::string& expected) const {
    throw InputError(location_of(n), key_path, describe(n), expected);
  }
  const std::string& path() const { return path_; }
  std::vector<std::int64_t> integer_or_list(std::string_view key) const;
  std::vector<std::int64_t> integer_or_list(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  /// A number, or a non-empty list of distinct ones, within the schema's range.
  std::vector<double> number_or_list(std::string_view key, double fallback) const;

  std::int64_t parse_integer(const YAML::Node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const;
  Location location() const { return where_; }
  Location location_of(const YAML::Node& n) const;

 private:
  const std::vector<schema::Key>& schema() const;
  /// The schema's key at this section's `key`, and the bounds its range declares (if it declares them).
  const schema::Key& declared(std::string_view key) const;
  std::optional<schema::Bounds> declared_bounds(std::string_view key) const;
  double checked_number(const YAML::Node& n, std::string_view key, const schema::Bounds& b) const;
  struct Entry {
    YAML::Node key;
    YAML::Node value;
  };
  const Reader& reader_;
  const std::vector<schema::Key>* schema_ = nullptr;  ///< where child(key) finds its keys
  std::string path_;
  Location where_;
  std::map<std::string, Entry> entries_;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  Location at(const YAML::Mark& m) const {
    if (m.is_null()) return Location{file_, 0, 0};
    return Location{file_, m.line + 1, m.column + 1};
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

/// Rejects what yaml-cpp should never see: oversized files, overlong lines,
/// NUL bytes, control characters and invalid UTF-8, located by line and column.
void check_text(std::string_view text, const std::string& file);
/// The one YAML document in `text`; InputError for a syntax error, an empty
/// file or several documents. Never loops on input yaml-cpp 0.7's LoadAll
/// would loop on (jbeder/yaml-cpp#1040).
YAML::Node parse_yaml(std::string_view text, const std::string& file);

}  // namespace ddpsim::scenarios
