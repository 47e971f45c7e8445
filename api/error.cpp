// ddpsim::Error and the translation of the library's exceptions into it.

#include <fmt/format.h>

#include <filesystem>
#include <new>

#include "api/api_data.hpp"
#include "loader/input_error.hpp"
#include "sim/build_info.hpp"
#include "sim/time.hpp"

namespace ddpsim {

Error::Error(ErrorKind kind, const std::string& message, std::string file, int line, int column, std::string key)
    : std::runtime_error(message),
      kind_(kind),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_(std::move(key)) {}

std::string version() { return fmt::format("{} ({})", sim::ddpsim_version(), sim::git_commit()); }

namespace api {

Error translate(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return e;
  } catch (const scenarios::InputError& e) {
    return {ErrorKind::kBadInput, e.what(), e.where().file, e.where().line, e.where().column, e.key()};
  } catch (const sim::TimeRangeError& e) {
    return {ErrorKind::kBadInput,
            fmt::format("{}: expected values whose simulated times fit; lower the keys named", e.what())};
  } catch (const std::filesystem::filesystem_error& e) {
    return {ErrorKind::kBadInput, fmt::format("{}: {}", e.path1().string(), e.code().message()), e.path1().string()};
  } catch (const std::bad_alloc&) {
    return {ErrorKind::kBadInput,
            "out of memory: the run needs more memory than this machine gave it (ddpsim check prints its estimate); "
            "expected fewer ranks, iterations or traced ranks"};
  } catch (const scenarios::Cancelled& e) {
    return {ErrorKind::kCancelled, e.what()};
  } catch (const std::exception& e) {
    return {ErrorKind::kInternal, e.what()};
  } catch (...) {
    return {ErrorKind::kInternal, "an exception of unknown type"};
  }
}

}  // namespace api
}  // namespace ddpsim
