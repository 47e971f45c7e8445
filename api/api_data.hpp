#pragma once
// What the public API's handles hold (include/ddpsim/ddpsim.hpp), and the one
// place exceptions become ddpsim::Error. Private to api/ and its clients in
// this repository (cli/).

#include <exception>
#include <string>
#include <utility>

#include "ddpsim/ddpsim.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"

namespace ddpsim {

struct ScenarioData {
  scenarios::Scenario scenario;
  std::string text;  ///< what it was parsed from (the advisor edits it into variants)
};

struct SweepData {
  scenarios::Scenario scenario;  ///< with the run's engine and world sizes applied
  scenarios::SweepResult result;
};

namespace api {

/// The exception in flight as a ddpsim::Error, with the command line's
/// message and exit code for each kind (README.md#exit-codes): bad input of
/// every sort (InputError, a simulated time out of range, a file error, out
/// of memory), cancellation, and anything else as an internal error.
Error translate(const std::exception_ptr& failure);

/// Calls `body`, its exceptions as translate() makes them.
template <class Body>
auto guarded(Body&& body) -> decltype(body()) {
  try {
    return std::forward<Body>(body)();
  } catch (const Error&) {
    throw;
  } catch (...) {
    throw translate(std::current_exception());
  }
}

}  // namespace api
}  // namespace ddpsim
