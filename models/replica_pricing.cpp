#include "models/replica_pricing.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "models/fsdp_program.hpp"

namespace ddpsim::models {

ReplicaPricing::ReplicaPricing(const DdpJob& job, std::vector<std::vector<int>> groups, CollectiveTimer* simgrid)
    : job_(job), groups_(std::move(groups)), simgrid_(simgrid), slow_(slow_links(job)) {
  for (const std::vector<int>& ranks : groups_) slow_in_group_.push_back(slow_links_in(slow_, ranks));
}

sim::Time ReplicaPricing::time(const sim::Collective& c, int group, const std::vector<sim::InFlight>& in_flight) {
  const auto at =
      std::find_if(in_flight.begin(), in_flight.end(), [group](const sim::InFlight& f) { return f.group == group; });
  if (at == in_flight.end()) throw std::logic_error("a process group priced without its own collective in flight");
  if (simgrid_ == nullptr) {
    const int nodes = static_cast<int>(groups_.front().size());
    std::unique_ptr<CollectiveTimer>& timer = fair_share_[static_cast<int>(in_flight.size())];
    if (!timer) timer = replica_timer(job_, nodes, static_cast<int>(in_flight.size()));
    return timer->time(c, nodes, slow_in_group_.at(static_cast<std::size_t>(group)));
  }
  // The set in flight, the priced group's collective as asked (its check
  // collective, when it has one, is asked for with the others as sent).
  std::vector<std::tuple<int, sim::CollectiveKind, std::int64_t>> key;
  std::vector<GroupCall> calls;
  for (const sim::InFlight& f : in_flight) {
    const sim::Collective& x = f.group == group ? c : f.collective;
    key.emplace_back(f.group, x.kind, x.bytes);
    calls.push_back({x, groups_.at(static_cast<std::size_t>(f.group))});
  }
  auto [it, fresh] = together_.try_emplace(key);
  if (fresh) it->second = simgrid_->time_together(calls, slow_);
  return it->second[static_cast<std::size_t>(at - in_flight.begin())];
}

}  // namespace ddpsim::models
