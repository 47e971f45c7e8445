#pragma once
// ddpsim-real's side of an emulated cluster network (docs/emulated-network.md):
// the namespace, the per-rank links and their check are made by the launcher
// (python3 -m ddpsim_torch network RATE --ranks W -- mpirun ...); each rank
// started under it with --network RATE checks that it is inside a network of
// that rate, and points Open MPI at its own address before MPI_Init.
#include <string>

namespace ddpsim::real {

/// "1gbit", "400mbit", "2.5gbit" (tc's units, k = 1000) -> bits per second; std::invalid_argument otherwise.
double parse_network_rate(const std::string& text);

/// Before MPI_Init, for `--network rate`: this process must be inside a launcher's emulated network of that
/// rate (DDPSIM_NETWORK), with a block of ports for its rank (DDPSIM_RANK_PORTS, OMPI_COMM_WORLD_RANK or
/// PMI_RANK). Sets Open MPI's TCP transport on the loopback (not shared memory: the ranks' bytes cross the
/// shaped link), its listening ports in the rank's block, and the shim's port mode, which binds the rank's
/// connections to the block too (Open MPI refuses a connection from an address its peer did not advertise,
/// so every rank stays on 127.0.0.1). Throws std::invalid_argument, saying how to start the job, otherwise.
void join_emulated_network(const std::string& rate);

/// The launcher's check of the network (DDPSIM_NETWORK_CHECK's JSON, compact), or "" outside one.
std::string emulated_network_record();

}  // namespace ddpsim::real
