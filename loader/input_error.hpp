#pragma once
// The one error type for bad input (scenario files, command lines). Caught
// once, in main, and turned into exit code 2.

#include <stdexcept>
#include <string>

namespace ddpsim::scenarios {

/// Where in an input file something is; line and column are 1-based, 0 when unknown.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

class InputError : public std::runtime_error {
 public:
  /// "file:line:column: key 'k': value 'v': expected E" (parts left empty are omitted).
  InputError(const Location& where, const std::string& key, const std::string& value,
             const std::string& expected);

  /// An InputError another process raised, its message already rendered (a split sweep's gather).
  static InputError relayed(const std::string& message) { return InputError(message); }

  const Location& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  explicit InputError(const std::string& rendered) : std::runtime_error(rendered) {}
  Location where_;
  std::string key_;
};

}  // namespace ddpsim::scenarios
