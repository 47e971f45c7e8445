#pragma once
// A text table's cell: padded to its column's width, and never run into the
// next one (a value wider than its column gets one space after it).

#include <string>

namespace ddpsim::present {

inline std::string cell(const std::string& text, std::size_t width) {
  return text.size() < width ? text + std::string(width - text.size(), ' ') : text + ' ';
}

}  // namespace ddpsim::present
