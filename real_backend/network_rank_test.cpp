#include "real_backend/network_rank.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

using ddpsim::real::join_emulated_network;
using ddpsim::real::parse_network_rate;

namespace {

std::string error_of(const std::string& rate) {
  try {
    join_emulated_network(rate);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

TEST_CASE("--network RATE: tc's units, and a clear refusal of anything else") {
  CHECK(parse_network_rate("1gbit") == 1e9);
  CHECK(parse_network_rate("400mbit") == 4e8);
  CHECK(parse_network_rate("2.5gbit") == 2.5e9);
  CHECK_THROWS_WITH_AS(parse_network_rate("1gbps"), doctest::Contains("expected a rate such as 1gbit"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_network_rate("100gbit"), doctest::Contains("from 1mbit to 40gbit"), std::invalid_argument);
}

TEST_CASE("--network: a rank outside the launcher's network is told how to start the job; inside, Open MPI is "
          "pointed at the rank's ports") {
  unsetenv("DDPSIM_NETWORK");
  CHECK(error_of("1gbit").find("not inside an emulated network; start the job inside one: python3 -m ddpsim_torch "
                               "network 1gbit --ranks W -- mpirun") != std::string::npos);
  setenv("DDPSIM_NETWORK", "400000000", 1);
  CHECK(error_of("1gbit").find("runs at 400 Mbit/s, not 1000") != std::string::npos);
  setenv("DDPSIM_NETWORK", "1000000000", 1);
  setenv("DDPSIM_RANK_PORTS", "16384:64", 1);
  setenv("DDPSIM_NETWORK_RANKS", "2", 1);
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  CHECK(error_of("1gbit").find("rank '2' has no ports in the network of 2 rank(s)") != std::string::npos);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  CHECK(error_of("1gbit").empty());
  CHECK(env("OMPI_MCA_btl") == "tcp,self");
  CHECK(env("OMPI_MCA_btl_tcp_port_min_v4") == "16448");  // 16384 + 64 x rank 1
  CHECK(env("OMPI_MCA_btl_tcp_port_range_v4") == "32");   // the lower half: listeners
  CHECK(env("DDPSIM_NETBIND_MODE") == "port");
  for (const char* name : {"DDPSIM_NETWORK", "DDPSIM_RANK_PORTS", "DDPSIM_NETWORK_RANKS", "OMPI_COMM_WORLD_RANK",
                           "OMPI_MCA_btl", "OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_btl_tcp_disable_family",
                           "OMPI_MCA_btl_tcp_port_min_v4", "OMPI_MCA_btl_tcp_port_range_v4", "DDPSIM_NETBIND_MODE"}) {
    unsetenv(name);
  }
}
