#pragma once
// SHA-256 of bytes, as lowercase hex or raw, from OpenSSL's EVP interface.
// Used for checkpoint checksums and result provenance.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddpsim::sim {

using Sha256 = std::array<std::uint8_t, 32>;

/// SHA-256 of `bytes`.
Sha256 sha256(std::string_view bytes);
/// Lowercase hex of a digest.
std::string to_hex(const Sha256& digest);

}  // namespace ddpsim::sim
