#include "models/replica_pricing.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "models/fsdp_program.hpp"

namespace ddpsim::models {

ReplicaPricing::ReplicaPricing(const DdpJob& job, std::vector<std::vector<int>> replicas, CollectiveTimer* simgrid)
    : job_(job), replicas_(std::move(replicas)), simgrid_(simgrid) {}

sim::Time ReplicaPricing::time(const sim::Collective& c, int group, const std::vector<int>& in_flight) {
  const auto at = std::find(in_flight.begin(), in_flight.end(), group);
  if (at == in_flight.end()) throw std::logic_error("a replica group priced without its own collective in flight");
  const int nodes = static_cast<int>(replicas_.front().size());
  if (simgrid_ == nullptr) {
    std::unique_ptr<CollectiveTimer>& timer = fair_share_[static_cast<int>(in_flight.size())];
    if (!timer) timer = replica_timer(job_, nodes, static_cast<int>(in_flight.size()));
    return timer->time(c, nodes, {});
  }
  auto [it, fresh] = together_.try_emplace({c.kind, c.bytes, in_flight});
  if (fresh) {
    std::vector<std::vector<int>> running;
    for (int i : in_flight) running.push_back(replicas_.at(static_cast<std::size_t>(i)));
    it->second = simgrid_->time_together(c, running);
  }
  return it->second[static_cast<std::size_t>(at - in_flight.begin())];
}

}  // namespace ddpsim::models
