#pragma once
// What each simulated link carried in a run (the SimGrid engine's link
// statistics): its bytes and how long it was busy, and the means a report
// shows, per step and as a share of the run's simulated time.

#include <string>
#include <vector>

namespace ddpsim::models {

/// One direction of a link (a full-duplex link's two directions are two
/// entries, "NAME/up" and "NAME/down"), over a run.
struct LinkLoad {
  std::string name;          ///< the platform's link name (netsim/simgrid_platform.cpp)
  double capacity_GBps = 0;  ///< its bandwidth, as the cluster section gives it
  double bytes = 0;          ///< bytes that crossed it, every collective of the run
  double busy_s = 0;         ///< seconds during which a transfer crossed it
  double bytes_per_step = 0; ///< bytes / the run's iterations
  double busy_share = 0;     ///< busy_s / the run's simulated time, in [0, 1]
};

/// The `count` busiest of `links` (busy share, then bytes, then name), busiest first.
std::vector<LinkLoad> busiest_links(std::vector<LinkLoad> links, std::size_t count);

}  // namespace ddpsim::models
