#pragma once
// Internal to sim/engine.cpp: a collective's rendezvous (what each member
// issued, when it arrived), the process groups, and rank-major's arrivals.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <cstdint>
#include <map>
#include <vector>

#include "sim/engine.hpp"

namespace ddpsim::sim {
namespace {  // internal linkage: see engine_core.hpp

struct Rendezvous {
  std::vector<Time> arrival;  // by member position
  std::vector<char> arrived;
  // What each member issued. While every arrival matches the first
  // (`uniform`, the usual case) these stay empty and `first`/`first_label`
  // speak for all; the first disagreement fills them in.
  std::vector<Collective> collectives;
  std::vector<OpLabel> labels;
  bool uniform = true;
  Collective first;
  OpLabel first_label;
  int recorded = 0;  // members that reached it
  int count = 0;     // of those, the ones that wait in it (not one that dies as it arrives: CollectiveLibrary::peer_died)
  Time start;
  // The first and the last arrival in time: the watchdog's deadline runs from
  // the first, the collective starts at the last.
  Time earliest_arrival, last_arrival;
  bool stalled = false;
  // kRankMajor: resolved, it ends at `done_at` (each member learns it in the next sweep).
  bool resolved = false;
  Time done_at;

  void reset(std::size_t members) {
    arrival.assign(members, Time{});
    arrived.assign(members, 0);
    collectives.clear();
    labels.clear();
    uniform = true;
    recorded = count = 0;
    stalled = resolved = false;
  }
  void record(std::size_t pos, Collective c, OpLabel l, Time at) {
    if (recorded == 0) {
      first = c;
      first_label = l;
    } else if (uniform && !(same(c, first) && same(l, first_label))) {
      uniform = false;
      collectives.assign(arrived.size(), Collective{});
      labels.assign(arrived.size(), OpLabel{});
      for (std::size_t p = 0; p < arrived.size(); ++p) {
        if (arrived[p]) {
          collectives[p] = first;
          labels[p] = first_label;
        }
      }
    }
    if (!uniform) {
      collectives[pos] = c;
      labels[pos] = l;
    }
    arrival[pos] = at;
    arrived[pos] = 1;
    if (recorded == 0 || at < earliest_arrival) earliest_arrival = at;
    if (recorded == 0 || last_arrival < at) last_arrival = at;
    ++recorded;
  }
  /// What the member at `pos` issued (nothing yet: a default Collective).
  Collective collective_of(std::size_t pos) const {
    if (!uniform) return collectives[pos];
    return arrived[pos] ? first : Collective{};
  }
  OpLabel label_of(std::size_t pos) const {
    if (!uniform) return labels[pos];
    return arrived[pos] ? first_label : OpLabel{};
  }
  static bool same(Collective a, Collective b) { return a.kind == b.kind && a.bytes == b.bytes; }
  static bool same(OpLabel a, OpLabel b) { return a.tag == b.tag && a.iteration == b.iteration && a.index == b.index; }
};

struct Group {
  std::vector<int> members;           // ranks, in the order given (the world: ascending)
  std::vector<int> position_of_rank;  // -1 for non-members
  std::vector<std::uint64_t> issued;  // per member: collectives issued so far
  std::map<std::uint64_t, Rendezvous> open;
  int dead_members = 0;
  StreamKind stream = StreamKind::kComm;  // where its members run its collectives
  CollectiveCostFn cost;                  // its own pricing; empty: the engine's
  int sharing = -1;        // Engine::add_sharing_groups: which set of link-sharing groups (-1: none)
  int sharing_index = -1;  // and its index there
};

// kRankMajor: a member reaching a collective, recorded between sweeps.
struct Arrival {
  int rank;
  GroupId group;
  std::uint64_t seq;
  Collective collective;
  OpLabel label;
  Time at;
};

}  // namespace
}  // namespace ddpsim::sim
