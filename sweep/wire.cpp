// The wire format of split runs (wire.hpp).

#include "sweep/wire.hpp"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ddpsim::scenarios {

std::string to_wire(const nlohmann::json& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(value);
  return {bytes.begin(), bytes.end()};
}

nlohmann::json from_wire(const std::string& bytes, const std::string& what) {
  try {
    return nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(what + " could not be read: " + e.what());
  }
}

}  // namespace ddpsim::scenarios
