// schema::bounds: a numeric key's range text, parsed. The grammar is
// schema.hpp's (Key::range); schema_test checks every numeric key of every
// file format parses, or is one whose bounds depend on other keys.

#include "loader/schema.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace ddpsim::scenarios::schema {
namespace {

// "10,000,000", "-1", "1e6", "0.5", "2^40".
std::optional<double> parse_number(std::string_view text) {
  std::string plain;
  for (char c : text) {
    if (c != ',') plain += c;
  }
  if (plain.empty()) return std::nullopt;
  if (const std::size_t caret = plain.find('^'); caret != std::string::npos) {
    const auto base = parse_number(plain.substr(0, caret));
    const auto exponent = parse_number(plain.substr(caret + 1));
    if (!base || !exponent) return std::nullopt;
    return std::pow(*base, *exponent);
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(plain.data(), plain.data() + plain.size(), v);
  if (ec != std::errc() || end != plain.data() + plain.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The range's own text: what comes before a note ("; note", ", note" after
// a number, " (note)").
std::string_view head_of(std::string_view range) {
  if (const std::size_t semi = range.find("; "); semi != std::string_view::npos) range = range.substr(0, semi);
  if (const std::size_t paren = range.find(" ("); paren != std::string_view::npos) range = range.substr(0, paren);
  if (!range.starts_with("(")) {
    if (const std::size_t comma = range.find(", "); comma != std::string_view::npos) range = range.substr(0, comma);
  }
  return range;
}

}  // namespace

std::optional<Bounds> bounds(std::string_view range) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::string_view head = head_of(range);
  if (head.starts_with(">= ") || head.starts_with("> ")) {
    const bool open = head[1] != '=';
    const auto lo = parse_number(head.substr(open ? 2 : 3));
    if (!lo) return std::nullopt;
    return Bounds{*lo, open, kInf};
  }
  if (head.starts_with("(") && head.ends_with("]")) {
    const std::size_t comma = head.find(", ");
    if (comma == std::string_view::npos) return std::nullopt;
    const auto lo = parse_number(head.substr(1, comma - 1));
    const auto hi = parse_number(head.substr(comma + 2, head.size() - comma - 3));
    if (!lo || !hi) return std::nullopt;
    return Bounds{*lo, true, *hi};
  }
  if (const std::size_t dots = head.find(".."); dots != std::string_view::npos) {
    const auto lo = parse_number(head.substr(0, dots));
    const auto hi = parse_number(head.substr(dots + 2));
    if (!lo || !hi) return std::nullopt;
    return Bounds{*lo, false, *hi};
  }
  return std::nullopt;
}

}  // namespace ddpsim::scenarios::schema
