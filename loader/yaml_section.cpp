// The scenario loader's YAML layer (loader/yaml_section.hpp).

#include "loader/yaml_section.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

using sim::Time;

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "(nothing)";
    case YAML::NodeType::Sequence: return "(a sequence)";
    case YAML::NodeType::Map: return "(a mapping)";
    case YAML::NodeType::Scalar: {
      std::string s = n.Scalar();
      if (s.size() > 60) s = s.substr(0, 57) + "...";
      return "'" + s + "'";
    }
    default: return "(undefined)";
  }
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : ", ");
    out += names[i];
  }
  return out;
}

Location Section::location_of(const YAML::Node& n) const {
  const Location l = reader_.at(n.Mark());
  return l.line > 0 ? l : where_;
}

Section::Section(const Reader& reader, YAML::Node node, std::string path, Location where,
                 std::vector<std::string_view> allowed)
    : reader_(reader), path_(std::move(path)), where_(where) {
  if (!node.IsDefined() || node.IsNull()) return;  // an absent or empty section
  if (!node.IsMap()) {
    throw InputError(location_of(node), path_.empty() ? "(document)" : path_, describe(node),
                     "expected a mapping of keys to values");
  }
  for (const auto& pair : node) {
    // Copies: yaml-cpp's iterator yields a temporary pair, so references into it dangle.
    const YAML::Node k = pair.first;
    const YAML::Node v = pair.second;
    const Location kl = location_of(k);
    if (!k.IsScalar()) throw InputError(kl, path_, describe(k), "expected a plain key");
    const std::string name = k.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string expected = "unknown key";
      std::string_view best;
      std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
      for (std::string_view a : allowed) {
        const std::size_t d = edit_distance(name, a);
        if (d < best_d) best = a, best_d = d;
      }
      if (!best.empty()) expected += fmt::format(" (did you mean '{}'?)", best);
      expected += "; allowed here: " + join(allowed);
      throw InputError(kl, path_of(name), "", expected);
    }
    if (entries_.count(name)) {
      const Location first = location_of(entries_.at(name).key);
      throw InputError(kl, path_of(name), "",
                       fmt::format("duplicate key (first given at line {})", first.line));
    }
    entries_.emplace(name, Entry{k, v});
  }
}

Section::Section(const Reader& reader, YAML::Node node, const std::vector<schema::Key>& keys)
    : Section(reader, std::move(node), "", Location{reader.file(), 1, 1}, schema::children(keys, "")) {
  schema_ = &keys;
}

void Section::fail(std::string_view key, const std::string& expected) const {
  throw InputError(location_of(entries_.at(std::string(key)).key), path_of(key), "", expected);
}

void Section::fail_value(std::string_view key, const std::string& expected) const {
  const YAML::Node& v = value(key);
  throw InputError(v.IsNull() ? location_of(entries_.at(std::string(key)).key) : location_of(v), path_of(key),
                   describe(v), expected);
}

void Section::missing(std::string_view key, const std::string& expected) const {
  throw InputError(where_, path_of(key), "", "missing; expected " + expected);
}

Section Section::child(std::string_view key, std::vector<std::string_view> allowed) const {
  const bool present = has(key);
  Section out(reader_, present ? entries_.at(std::string(key)).value : YAML::Node(), path_of(key),
              present ? location_of(entries_.at(std::string(key)).key) : where_, std::move(allowed));
  out.schema_ = schema_;
  return out;
}

namespace {

// "faults[3].rank" -> "faults[].rank": a key's path in the schema.
std::string schema_path(std::string_view path) {
  std::string out;
  bool in_index = false;
  for (char c : path) {
    if (c == ']') in_index = false;
    if (!in_index) out += c;
    if (c == '[') in_index = true;
  }
  return out;
}

}  // namespace

const std::vector<schema::Key>& Section::schema() const {
  if (schema_ == nullptr) throw std::logic_error("scenario section '" + path_ + "' has no schema");
  return *schema_;
}

Section Section::child(std::string_view key) const {
  return child(key, schema::children(schema(), schema_path(path_of(key))));
}

std::string Section::choice(std::string_view key, std::optional<std::string_view> fallback) const {
  return choice(key, schema::choices(schema(), schema_path(path_of(key))), fallback);
}

// Plain (unquoted) scalars only: a quoted "40" is a string, not a number.
static bool plain_scalar(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

std::int64_t Section::parse_integer(const YAML::Node& n, std::string_view key, std::int64_t lo,
                                    std::int64_t hi) const {
  const std::string expected = hi == INT64_MAX ? fmt::format("expected an integer >= {}", lo)
                                               : fmt::format("expected an integer from {} to {}", lo, hi);
  if (!plain_scalar(n)) throw InputError(location_of(n), path_of(key), describe(n), expected);
  const std::string& s = n.Scalar();
  std::int64_t v = 0;
  const char* first = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < lo || v > hi) {
    throw InputError(location_of(n), path_of(key), describe(n), expected);
  }
  return v;
}

const schema::Key& Section::declared(std::string_view key) const { return schema::key(schema(), schema_path(path_of(key))); }

std::optional<schema::Bounds> Section::declared_bounds(std::string_view key) const {
  return schema::bounds(declared(key).range);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The integers of `b`: [lo, hi] with an open lo stepped past, an infinite hi as INT64_MAX.
std::pair<std::int64_t, std::int64_t> integer_range(const schema::Bounds& b) {
  const double lo = b.lo_open ? std::floor(b.lo) + 1 : std::ceil(b.lo);
  const std::int64_t hi = b.hi >= 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(std::floor(b.hi));
  return {static_cast<std::int64_t>(lo), hi};
}

std::string number_text(const schema::Bounds& b, std::string_view unit) {
  std::string out = fmt::format("a finite number {} {:g}", b.lo_open ? ">" : ">=", b.lo);
  if (b.hi < kInf) out += fmt::format(" and <= {:g}", b.hi);
  if (!unit.empty()) out += fmt::format(" ({})", unit);
  return out;
}

}  // namespace

std::int64_t Section::integer(std::string_view key, std::optional<std::int64_t> fallback) const {
  const auto b = declared_bounds(key);
  if (!b) throw std::logic_error(fmt::format("schema: '{}' declares no range", path_of(key)));
  const auto [lo, hi] = integer_range(*b);
  return integer(key, lo, hi, fallback);
}

std::int64_t Section::integer(std::string_view key, std::int64_t lo, std::int64_t hi,
                              std::optional<std::int64_t> fallback) const {
  if (schema_ != nullptr) {
    if (const auto b = declared_bounds(key)) {
      const auto [dlo, dhi] = integer_range(*b);
      if (lo < dlo || hi > dhi) {
        throw std::logic_error(fmt::format("loader: '{}' allows {}..{}, outside its schema range {}", path_of(key), lo,
                                           hi, declared(key).range));
      }
    }
  }
  if (!has(key)) {
    if (fallback) return *fallback;
    missing(key, hi == INT64_MAX ? fmt::format("an integer >= {}", lo)
                                 : fmt::format("an integer from {} to {}", lo, hi));
  }
  return parse_integer(value(key), key, lo, hi);
}

double Section::checked_number(const YAML::Node& n, std::string_view key, const schema::Bounds& b) const {
  const std::string expected = "expected " + number_text(b, declared(key).unit);
  if (!plain_scalar(n)) throw InputError(location_of(n), path_of(key), describe(n), expected);
  const std::string& s = n.Scalar();
  double v = 0;
  const char* first = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || (b.lo_open ? v <= b.lo : v < b.lo) ||
      v > b.hi) {
    throw InputError(location_of(n), path_of(key), describe(n), expected);
  }
  return v;
}

double Section::number(std::string_view key, std::optional<double> fallback) const {
  const auto b = declared_bounds(key);
  if (!b) throw std::logic_error(fmt::format("schema: '{}' declares no range", path_of(key)));
  return number(key, *b, fallback);
}

double Section::number(std::string_view key, schema::Bounds within, std::optional<double> fallback) const {
  if (const auto b = declared_bounds(key);
      b && (within.lo < b->lo || (within.lo == b->lo && b->lo_open && !within.lo_open) || within.hi > b->hi)) {
    throw std::logic_error(fmt::format("loader: '{}' allows more than its schema range {}", path_of(key),
                                       declared(key).range));
  }
  if (!has(key)) {
    if (fallback) return *fallback;
    missing(key, number_text(within, declared(key).unit));
  }
  return checked_number(value(key), key, within);
}

Time Section::millis(std::string_view key, std::optional<double> fallback) const {
  return Time::from_ms(number(key, fallback), path_of(key).c_str());
}

Time Section::micros(std::string_view key, std::optional<double> fallback) const {
  return Time::from_us(number(key, fallback), path_of(key).c_str());
}

std::string Section::choice(std::string_view key, std::vector<std::string_view> options,
                            std::optional<std::string_view> fallback) const {
  const std::string expected = "one of: " + join(options);
  if (!has(key)) {
    if (fallback) return std::string(*fallback);
    missing(key, expected);
  }
  const YAML::Node& n = value(key);
  if (!n.IsScalar() || std::find(options.begin(), options.end(), n.Scalar()) == options.end()) {
    fail_value(key, "expected " + expected);
  }
  return n.Scalar();
}

std::string Section::text(std::string_view key, std::string fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node& n = value(key);
  if (!n.IsScalar() || n.Scalar().empty()) fail_value(key, "expected a non-empty string");
  return n.Scalar();
}

bool Section::boolean(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node& n = value(key);
  if (plain_scalar(n)) {
    if (n.Scalar() == "true") return true;
    if (n.Scalar() == "false") return false;
  }
  fail_value(key, "expected true or false");
}

std::vector<YAML::Node> Section::sequence(std::string_view key) const {
  if (!has(key)) return {};
  const YAML::Node& n = value(key);
  if (!n.IsSequence()) fail_value(key, "expected a list");
  return std::vector<YAML::Node>(n.begin(), n.end());
}

Section Section::item(const YAML::Node& n, std::string path, std::vector<std::string_view> allowed) const {
  Section out(reader_, n, std::move(path), location_of(n), std::move(allowed));
  out.schema_ = schema_;
  return out;
}

Section Section::item(const YAML::Node& n, std::string_view key, std::size_t index) const {
  const std::string path = fmt::format("{}[{}]", path_of(key), index);
  return item(n, path, schema::children(schema(), schema_path(path)));
}

std::vector<std::pair<std::string, YAML::Node>> Section::strings(std::string_view key) const {
  std::vector<std::pair<std::string, YAML::Node>> out;
  for (const YAML::Node& n : sequence(key)) {
    if (!n.IsScalar() || n.Scalar().empty()) fail_node(n, path_of(key), "expected a name");
    out.emplace_back(n.Scalar(), n);
  }
  return out;
}

std::vector<double> Section::number_or_list(std::string_view key, double fallback) const {
  if (!has(key)) return {fallback};
  const YAML::Node& n = value(key);
  const auto b = declared_bounds(key);
  if (!b) throw std::logic_error(fmt::format("schema: '{}' declares no range", path_of(key)));
  if (!n.IsSequence()) return {checked_number(n, key, *b)};
  if (n.size() == 0) fail_value(key, "expected a number or a non-empty list of numbers");
  std::vector<double> out;
  for (const YAML::Node& item : n) {
    const double v = checked_number(item, key, *b);
    if (std::find(out.begin(), out.end(), v) != out.end()) {
      throw InputError(location_of(item), path_of(key), describe(item), "expected no repeated values");
    }
    out.push_back(v);
  }
  return out;
}

std::vector<std::int64_t> Section::integer_or_list(std::string_view key) const {
  const auto b = declared_bounds(key);
  if (!b) throw std::logic_error(fmt::format("schema: '{}' declares no range", path_of(key)));
  const auto [lo, hi] = integer_range(*b);
  return integer_or_list(key, lo, hi);
}

std::vector<std::int64_t> Section::integer_or_list(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  const std::string what = fmt::format("an integer from {} to {}, or a non-empty list of them", lo, hi);
  if (!has(key)) missing(key, what);
  const YAML::Node& n = value(key);
  std::vector<std::int64_t> out;
  if (n.IsSequence()) {
    if (n.size() == 0) fail_value(key, "expected " + what);
    for (const YAML::Node& item : n) {
      const std::int64_t v = parse_integer(item, key, lo, hi);
      if (std::find(out.begin(), out.end(), v) != out.end()) {
        throw InputError(location_of(item), path_of(key), describe(item), "expected no repeated values");
      }
      out.push_back(v);
    }
  } else {
    out.push_back(parse_integer(n, key, lo, hi));
  }
  return out;
}

// Rejects what yaml-cpp should never see: oversized files, overlong lines,
// NUL bytes, control characters and invalid UTF-8, located by line and column.
void check_text(std::string_view text, const std::string& file) {
  if (text.size() > kMaxScenarioBytes) {
    throw InputError({file, 0, 0}, "", "",
                     fmt::format("file is larger than {} bytes, the limit for a scenario", kMaxScenarioBytes));
  }
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int column = static_cast<int>(i - line_start) + 1;
    if (c == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (i - line_start >= kMaxLineBytes) {
      throw InputError({file, line, column}, "", "",
                       fmt::format("line longer than {} bytes; scenarios are small text files", kMaxLineBytes));
    }
    if (c < 0x20 && c != '\t' && c != '\r') {
      throw InputError({file, line, column}, "", fmt::format("0x{:02x}", c),
                       "a control character: expected UTF-8 text (is this a binary file?)");
    }
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (!ok) {
      throw InputError({file, line, column}, "", fmt::format("0x{:02x}", c),
                       "invalid UTF-8: expected UTF-8 text (is this a binary file?)");
    }
    i += len;
  }
}

namespace {

// Counts a stream's documents, two at most, and says where each began.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

[[noreturn]] void syntax_error(const YAML::ParserException& e, const std::string& file) {
  std::string msg = e.msg;
  if (msg == YAML::ErrorMsg::BAD_FILE) msg = "nested too deeply (at most 500 levels) or not YAML";
  throw InputError(Reader(file).at(e.mark), "", "", "YAML syntax error: " + msg);
}

}  // namespace

YAML::Node parse_yaml(std::string_view text, const std::string& file) {
  // yaml-cpp 0.7's LoadAll never ends on a token no node can start with
  // (a lone ',' at the root): each document it reads consumes nothing and
  // the next begins where it began (jbeder/yaml-cpp#1040, fixed upstream
  // after the version Debian 12 ships). So documents are counted here, and
  // one that begins where the previous one did is that syntax error.
  DocumentStarts starts;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (starts.starts.size() < 2 && parser.HandleNextDocument(starts)) {
    }
  } catch (const YAML::ParserException& e) {
    syntax_error(e, file);
  }
  if (starts.starts.size() == 2) {
    const YAML::Mark& first = starts.starts[0];
    const YAML::Mark& second = starts.starts[1];
    if (first.pos != second.pos) throw InputError({file, 0, 0}, "", "", "expected one YAML document, found several");
    const std::size_t at = static_cast<std::size_t>(std::max(0, second.pos));
    const bool ascii = at < text.size() && static_cast<unsigned char>(text[at]) < 0x80;
    const std::string token = ascii ? "'" + std::string(1, text[at]) + "'" : std::string();
    throw InputError(Reader(file).at(second), "", token, "YAML syntax error: no value can start here");
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    syntax_error(e, file);
  }
  if (starts.starts.empty() || root.IsNull()) throw InputError({file, 0, 0}, "", "", "empty scenario: expected a mapping");
  return root;
}

}  // namespace ddpsim::scenarios
