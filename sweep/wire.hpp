#pragma once
// The one wire format of every exchange between the processes of a split
// run (mpirun or srun): the sweep's simulated runs (run_wire.hpp) and the
// advisor's evaluated configurations. A value is nlohmann's JSON of the
// structs (their fields by name, NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE beside
// each) encoded as CBOR, which keeps doubles as IEEE-754 doubles bit for bit
// (NaN and infinities included), so the first process reports exactly what
// it would have computed itself.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace nlohmann {
/// std::optional on the wire: its value, or null.
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) {
      j = *v;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) {
      v.reset();
    } else {
      v = j.get<T>();
    }
  }
};
}  // namespace nlohmann

namespace ddpsim::scenarios {

/// `value` as the bytes another process reads back with from_wire.
std::string to_wire(const nlohmann::json& value);
/// The value to_wire wrote; std::runtime_error naming `what` ("a process's
/// runs") on bytes it did not write.
nlohmann::json from_wire(const std::string& bytes, const std::string& what);

}  // namespace ddpsim::scenarios
