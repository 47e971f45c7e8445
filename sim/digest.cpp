#include "sim/digest.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace ddpsim::sim {

Sha256 sha256(std::string_view bytes) {
  Sha256 out{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &length, EVP_sha256(), nullptr) != 1 || length != out.size()) {
    throw std::runtime_error("OpenSSL EVP_Digest(SHA-256) failed");
  }
  return out;
}

std::string to_hex(const Sha256& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(digest.size() * 2);
  for (std::uint8_t b : digest) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace ddpsim::sim
