#include "loader/input_error.hpp"

#include <fmt/format.h>

namespace ddpsim::scenarios {
namespace {

std::string render(const Location& at, const std::string& key, const std::string& value,
                   const std::string& expected) {
  std::string out = at.file;
  if (at.line > 0) out += fmt::format(":{}:{}", at.line, at.column);
  out += ": ";
  if (!key.empty()) out += fmt::format("key '{}': ", key);
  if (!value.empty()) out += fmt::format("value {}: ", value);
  out += expected;
  return out;
}

}  // namespace

InputError::InputError(const Location& where, const std::string& key, const std::string& value,
                       const std::string& expected)
    : std::runtime_error(render(where, key, value, expected)), where_(where), key_(key) {}

}  // namespace ddpsim::scenarios
