#include "real_backend/network_rank.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string_view>

namespace ddpsim::real {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string launch_hint(const std::string& rate) {
  return fmt::format("start the job inside one: python3 -m ddpsim_torch network {} --ranks W -- mpirun -np W "
                     "ddpsim-real ... --network {} (docs/emulated-network.md)",
                     rate, rate);
}

}  // namespace

double parse_network_rate(const std::string& text) {
  static const std::regex grammar(R"(([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit))");
  std::smatch m;
  if (!std::regex_match(text, m, grammar)) {
    throw std::invalid_argument(fmt::format(
        "--network '{}': expected a rate such as 1gbit, 400mbit or 2.5gbit (tc's units: bits per second, k = 1000)",
        text));
  }
  const std::string unit = m[3].str();
  const double scale = unit == "gbit" ? 1e9 : unit == "mbit" ? 1e6 : unit == "kbit" ? 1e3 : 1.0;
  const double bps = std::stod(m[1].str()) * scale;
  if (bps < 1e6 || bps > 40e9) {
    throw std::invalid_argument(fmt::format("--network '{}': expected a rate from 1mbit to 40gbit", text));
  }
  return bps;
}

void join_emulated_network(const std::string& rate) {
  const double bps = parse_network_rate(rate);
  const std::string inside = env("DDPSIM_NETWORK");
  if (inside.empty()) {
    throw std::invalid_argument(fmt::format("--network {}: this rank is not inside an emulated network; {}", rate,
                                            launch_hint(rate)));
  }
  const double inside_bps = std::strtod(inside.c_str(), nullptr);
  if (std::abs(inside_bps - bps) > 0.5) {
    throw std::invalid_argument(fmt::format("--network {}: the emulated network this rank is in runs at {:.0f} Mbit/s, "
                                            "not {:.0f}; {}",
                                            rate, inside_bps / 1e6, bps / 1e6, launch_hint(rate)));
  }
  std::string rank = env("OMPI_COMM_WORLD_RANK");
  if (rank.empty()) rank = env("PMI_RANK");
  const std::string ports = env("DDPSIM_RANK_PORTS");
  const std::size_t colon = ports.find(':');
  const int ranks = std::atoi(env("DDPSIM_NETWORK_RANKS").c_str());
  if (rank.empty() || colon == std::string::npos || std::stoi(rank) >= ranks) {
    throw std::invalid_argument(fmt::format("--network {}: rank '{}' has no ports in the network of {} rank(s) "
                                            "(DDPSIM_RANK_PORTS '{}'); {}",
                                            rate, rank, ranks, ports, launch_hint(rate)));
  }
  // Every rank on 127.0.0.1, known by its block of ports (netemu/netbind.cpp's port mode): its listener
  // in the lower half, its connections from the upper half, both matched by the launcher's tc filters.
  const long base = std::stol(ports.substr(0, colon)), block = std::stol(ports.substr(colon + 1));
  const std::string first = std::to_string(base + block * std::stol(rank)), half = std::to_string(block / 2);
  setenv("OMPI_MCA_btl", "tcp,self", 1);  // not shared memory: the ranks' bytes cross the shaped loopback
  setenv("OMPI_MCA_btl_tcp_if_include", "lo", 1);
  setenv("OMPI_MCA_btl_tcp_disable_family", "6", 1);
  setenv("OMPI_MCA_btl_tcp_port_min_v4", first.c_str(), 1);
  setenv("OMPI_MCA_btl_tcp_port_range_v4", half.c_str(), 1);
  setenv("DDPSIM_NETBIND_MODE", "port", 1);
}

std::string emulated_network_record() {
  const std::string path = env("DDPSIM_NETWORK_CHECK");
  if (path.empty()) return "";
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw std::runtime_error(fmt::format("DDPSIM_NETWORK_CHECK={}: not the network's check", path));
  return j.dump();
}

}  // namespace ddpsim::real
