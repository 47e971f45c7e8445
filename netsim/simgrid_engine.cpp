#include "netsim/simgrid_engine.hpp"

#include "models/collective_library.hpp"
#include "netsim/simgrid_platform.hpp"
#include "netsim/simgrid_routes.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <deque>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace ddpsim::netsim {
namespace sg4 = simgrid::s4u;
using models::Fabric;
using models::GroupCall;
using models::Hop;
using models::runs_hierarchical;
using models::SlowLink;

using detail::channel_pairs;
using detail::collective_routes;
using detail::Pair;
using detail::ring_of;
using detail::ring_pairs;
using detail::Platform;
using detail::SlowedLinks;
constexpr const char* kSimgridQuantity = "a collective's time on the SimGrid platform (cluster: bandwidths and latencies against the bytes it moves)";

namespace {

// Link statistics being gathered (SimgridTimer::link_loads): bytes and busy
// seconds by link direction, each step's counted `scale` times (the steps
// and rounds one simulated step stands for).
struct Ledger {
  std::map<std::string, models::LinkLoad> links;
  double scale = 1;
  void merge(const Ledger& other, double times = 1) {
    for (const auto& [name, l] : other.links) {
      models::LinkLoad& to = links[name];
      to.name = name;
      to.capacity_GBps = l.capacity_GBps;
      to.bytes += l.bytes * times;
      to.busy_s += l.busy_s * times;
    }
  }
};

// Multiplies the ledger's scale by `times` while it lives (no ledger: nothing).
class Scaled {
 public:
  Scaled(Ledger* ledger, double times) : ledger_(ledger), before_(ledger != nullptr ? ledger->scale : 1) {
    if (ledger_ != nullptr) ledger_->scale *= times;
  }
  ~Scaled() {
    if (ledger_ != nullptr) ledger_->scale = before_;
  }
  Scaled(const Scaled&) = delete;
  Scaled& operator=(const Scaled&) = delete;

 private:
  Ledger* ledger_;
  double before_;
};

// A direction of a route's link as the statistics name it: "NAME/up" or "NAME/down" when full duplex.
std::string link_name(const sg4::LinkInRoute& l) {
  const std::string base = l.get_link()->get_name();
  switch (l.get_direction()) {
    case sg4::LinkInRoute::Direction::UP: return base + "/up";
    case sg4::LinkInRoute::Direction::DOWN: return base + "/down";
    case sg4::LinkInRoute::Direction::NONE: break;
  }
  return base;
}

class SimgridTimer final : public CollectiveTimer {
 public:
  SimgridTimer(Platform& platform, const ClusterSpec& cluster, sim::Time launch, Algorithm algorithm,
               models::Broadcast broadcast, bool memoize, SimgridStats& stats)
      : platform_(platform), cluster_(cluster), launch_(launch), algorithm_(algorithm), broadcast_(broadcast),
        memoize_(memoize), stats_(stats) {}
  std::string_view engine() const override { return "simgrid"; }

  // Each group its own actor running its ring's steps, all started now; a
  // step of one group waits only for its own transfers, which share links
  // with the other groups' (max-min). Every step is simulated: the groups'
  // steps do not line up.
  std::vector<sim::Time> time_together(const std::vector<GroupCall>& calls,
                                       const std::vector<SlowLink>& slow) override {
    std::vector<std::pair<int, double>> slowed;
    for (const SlowLink& s : slow) {
      if (s.factor > 1) slowed.emplace_back(s.rank, s.factor);
    }
    const SlowedLinks slowing(platform_, slowed);
    const double start = sg4::Engine::get_clock();
    std::vector<double> end(calls.size(), start);
    std::vector<sg4::ActorPtr> actors;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const sim::CollectiveKind kind = calls[i].collective.kind;
      const bool all_reduce = kind == sim::CollectiveKind::kAllReduce || kind == sim::CollectiveKind::kBarrier;
      if (!all_reduce && kind != sim::CollectiveKind::kAllGather && kind != sim::CollectiveKind::kReduceScatter) {
        throw std::invalid_argument("process groups at once: all_reduce, all_gather or reduce_scatter (ring steps)");
      }
      const std::vector<int>& ranks = calls[i].ranks;
      const int w = static_cast<int>(ranks.size());
      if (w < 2) continue;
      const std::vector<Pair> ring = ring_of(ranks);
      for (const auto& [a, b] : ring) {
        if (!platform_.has_route(a, b)) {
          throw std::invalid_argument("process group " + std::to_string(i) + ": its ring was not given to run_with_simgrid");
        }
      }
      const int count = all_reduce ? 2 * (w - 1) : w - 1;
      const double n = static_cast<double>(models::priced_as(calls[i].collective).bytes);
      const auto run_ring = [this, ring, count, n, w, &end, i] {
        for (int s = 0; s < count; ++s) step_together(ring, n / w);  // other groups' transfers run beside it
        end[i] = sg4::Engine::get_clock();
      };
      actors.push_back(sg4::Actor::create("group" + std::to_string(i), platform_.host(ranks.front()), run_ring));
    }
    for (const sg4::ActorPtr& a : actors) a->join();
    stats_.collectives += calls.size();
    std::vector<sim::Time> out;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      out.push_back(calls[i].ranks.size() > 1
                        ? launch_ + sim::Time::from_ns(on_picoseconds(end[i] - start) * 1e9, kSimgridQuantity)
                        : sim::Time::zero());
    }
    return out;
  }
  using CollectiveTimer::time_together;

  sim::Time time(const sim::Collective& c, int w, const std::vector<SlowLink>& given_slow) override {
    if (w < 1 || w > cluster_.gpus()) throw std::invalid_argument("group larger than the cluster");
    const Key key = key_of(c, w, given_slow);
    if (const auto it = memo_.find(key); memoize_ && it != memo_.end()) return it->second;
    const std::vector<std::pair<int, double>>& slow = std::get<3>(key);
    double elapsed_ns = 0;
    Ledger links;  // what the simulation loads, kept for link_loads (the first time of each collective)
    {
      const SlowedLinks slowing(platform_, slow);
      parts_apart_ = slow.empty() && platform_.nodes_apart_from_network();
      ledger_ = &links;
      elapsed_ns = w > 1 ? execute(c, w) * 1e9 : 0;
      ledger_ = nullptr;
      parts_apart_ = false;
    }
    ledgers_.try_emplace(key, std::move(links));
    ++stats_.collectives;
    const sim::Time t = launch_ + sim::Time::from_ns(elapsed_ns, kSimgridQuantity);
    if (memoize_) memo_.emplace(key, t);
    return t;
  }

  // Each call's collective as time() simulated it (timed now if it never
  // was), its ledger times the call's count: a link's bytes are what crossed
  // it, its busy time the span from the first transfer on it starting to the
  // last ending in each step (all of a step's transfers start together),
  // times the steps one simulated step stands for; a node standing for its
  // alike nodes has its links entered for each.
  std::vector<models::LinkLoad> link_loads(const std::vector<models::TimedCall>& calls) override {
    Ledger total;
    for (const models::TimedCall& call : calls) {
      const int w = call.group_size;
      if (w < 2 || w > cluster_.gpus() || call.count <= 0) continue;
      const Key key = key_of(call.collective, w, call.slow);
      if (ledgers_.find(key) == ledgers_.end()) time(call.collective, w, call.slow);
      total.merge(ledgers_.at(key), static_cast<double>(call.count));
    }
    std::vector<models::LinkLoad> out;
    for (auto& [name, l] : total.links) out.push_back(std::move(l));
    return out;
  }

 private:
  // One step of a collective timed alone: every pair's transfer at once,
  // until the last ends; its duration in seconds. A pair inside a node
  // crosses only that node's GPU links, a pair between nodes only NICs and
  // uplinks (Platform::links_of), so the pairs between nodes and each node's
  // pairs share no link: the step lasts as long as the slowest of those
  // parts run alone (not on PCIe nodes: parts_apart_). Nodes whose links
  // are alike (no slow rank) and whose pairs are alike (the same local GPUs,
  // the same flows) take the same time, and one of them is simulated. At
  // 16,384 GPUs a flat ring's step is then 2,048 transfers between nodes and
  // 7 inside one, not 16,384.
  double step(const std::vector<Pair>& pairs, double bytes, const std::vector<int>* flows = nullptr) {
    if (!parts_apart_) return step_together(pairs, bytes, flows);
    const int g = cluster_.gpus_per_node;
    using Part = std::pair<std::vector<Pair>, std::vector<int>>;
    Part between;
    std::map<int, Part> inside;  // by node
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      Part& part = a / g == b / g ? inside[a / g] : between;
      part.first.push_back(pairs[i]);
      part.second.push_back(flows != nullptr ? (*flows)[i] : 1);
    }
    double longest = between.first.empty() ? 0 : step_together(between.first, bytes, &between.second);
    // A shape's first node, and with a ledger the links it loaded, which its alike nodes load alike.
    std::map<std::vector<std::tuple<int, int, int>>, std::pair<int, Ledger>> shapes;
    Ledger* const outer = ledger_;
    for (const auto& [node, part] : inside) {
      std::vector<std::tuple<int, int, int>> shape;
      for (std::size_t i = 0; i < part.first.size(); ++i) {
        shape.emplace_back(part.first[i].first % g, part.first[i].second % g, part.second[i]);
      }
      std::sort(shape.begin(), shape.end());
      const auto [it, fresh] = shapes.try_emplace(std::move(shape), node, Ledger{});
      if (fresh) {
        it->second.second.scale = outer != nullptr ? outer->scale : 1;
        if (outer != nullptr) ledger_ = &it->second.second;
        longest = std::max(longest, step_together(part.first, bytes, &part.second));
        ledger_ = outer;
      }
      if (outer != nullptr) outer->merge(on_node(it->second.second, it->second.first, node));
    }
    return longest;
  }

  // The links of node `from` in `ledger` renamed as node `to`'s (a node's links are named "n<node>-...").
  static Ledger on_node(const Ledger& ledger, int from, int to) {
    if (from == to) return ledger;
    Ledger out;
    const std::string was = "n" + std::to_string(from) + "-", now = "n" + std::to_string(to) + "-";
    for (const auto& [name, l] : ledger.links) {
      models::LinkLoad moved = l;
      moved.name = name.rfind(was, 0) == 0 ? now + name.substr(was.size()) : name;
      out.links[moved.name] = moved;
    }
    return out;
  }

  // Every pair's transfer at once, until the last ends; its duration in seconds.
  // With `flows`, pair i stands for flows[i] alike transfers on its route,
  // sent as one of flows[i] times the bytes: the same time wherever no other
  // transfer of the step crosses that route's links, as for the channels'
  // pairs inside a node (a GPU sends only to its successor there).
  double step_together(const std::vector<Pair>& pairs, double bytes, const std::vector<int>* flows = nullptr) {
    const double start = sg4::Engine::get_clock();
    const auto size = static_cast<std::uint64_t>(std::llround(std::max(0.0, bytes)));
    // Each transfer once its route's latency has passed (Platform::latency_s: 0 but on PCIe nodes).
    std::vector<std::pair<double, std::size_t>> order;
    order.reserve(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      order.emplace_back(platform_.latency_s(pairs[i].first, pairs[i].second), i);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<sg4::CommPtr> comms;
    comms.reserve(pairs.size());
    for (const auto& [latency, i] : order) {
      if (latency > 0) sg4::this_actor::sleep_until(start + latency);
      const auto times = static_cast<std::uint64_t>(flows != nullptr ? (*flows)[i] : 1);
      comms.push_back(sg4::Comm::sendto_async(platform_.host(pairs[i].first), platform_.host(pairs[i].second), size * times));
    }
    if (ledger_ != nullptr && size > 0) {  // an empty transfer loads no link
      record(pairs, order, comms, start, size, flows);
    } else {
      sg4::Comm::wait_all(comms);
    }
    stats_.transfers += pairs.size();
    return on_picoseconds(sg4::Engine::get_clock() - start);
  }

  // step_together's transfers waited for, each link's bytes and busy span
  // entered in the ledger. comms[j] is the transfer of pairs[order[j].second].
  void record(const std::vector<Pair>& pairs, const std::vector<std::pair<double, std::size_t>>& order,
              const std::vector<sg4::CommPtr>& comms, double start, std::uint64_t size, const std::vector<int>* flows) {
    sg4::Comm::wait_all(comms);
    std::vector<double> end(comms.size());
    for (std::size_t j = 0; j < comms.size(); ++j) end[j] = comms[j]->get_finish_time();
    std::map<std::string, std::pair<double, double>> span;  // link -> (first start, last end)
    for (std::size_t j = 0; j < order.size(); ++j) {
      const std::size_t i = order[j].second;
      const double times = flows != nullptr ? (*flows)[i] : 1;
      for (const sg4::LinkInRoute& l : platform_.route_links(pairs[i].first, pairs[i].second)) {
        const std::string name = link_name(l);
        models::LinkLoad& load = ledger_->links[name];
        load.name = name;
        load.capacity_GBps = l.get_link()->get_bandwidth() / 1e9;
        load.bytes += static_cast<double>(size) * times * ledger_->scale;
        const auto [it, fresh] = span.emplace(name, std::make_pair(start + order[j].first, end[j]));
        if (!fresh) {
          it->second.first = std::min(it->second.first, start + order[j].first);
          it->second.second = std::max(it->second.second, end[j]);
        }
      }
    }
    for (const auto& [name, s] : span) ledger_->links[name].busy_s += on_picoseconds(s.second - s.first) * ledger_->scale;
  }

  // A span of SimGrid's clock on the picosecond grid. SimGrid keeps absolute
  // time, so the difference of two readings is off by up to half a unit in
  // the last place of the clock (0.06 ps at 1,000 s): snapped, the same
  // transfers take the same time whenever they run, and a collective costs
  // the same wherever a sweep simulates it first (in any of mpirun's
  // processes, after any other rows). Exact while the clock stays under
  // about 4,000 simulated seconds (a unit in the last place under 1 ps).
  static double on_picoseconds(double seconds) { return std::round(seconds * 1e12) / 1e12; }

  // `count` steps of the same transfers. Each starts on an idle network (the
  // one before has ended, and a collective is timed alone), so each takes
  // exactly as long as the first: it is simulated once.
  double steps(const std::vector<Pair>& pairs, double bytes, int count) {
    const Scaled scaled(ledger_, count);
    return count > 0 ? count * step(pairs, bytes) : 0;
  }

  // `count` ring steps of bytes / W each; on kAuto's channels where it runs
  // them, each channel carrying bytes / (W k), a GPU's alike flows inside a
  // node merged (see step_together), and of those inside nodes one node's
  // (see step): k N + G transfers a step instead of k W.
  double ring_steps(sim::CollectiveKind kind, int w, double bytes, int count) {
    if (!models::runs_on_channels(algorithm_, kind)) return steps(ring_pairs(0, w, 1), bytes / w, count);
    std::vector<Pair> pairs;
    std::vector<int> flows;
    std::map<Pair, std::size_t> index;
    for (const Pair& p : channel_pairs(cluster_, w)) {
      const auto [it, added] = index.emplace(p, pairs.size());
      if (added) {
        pairs.push_back(p);
        flows.push_back(0);
      }
      ++flows[it->second];
    }
    const double per_channel = bytes / (w * models::ring_channels(cluster_, w));
    const Scaled scaled(ledger_, count);
    return count > 0 ? count * step(pairs, per_channel, &flows) : 0;
  }

  // Pipelined down the chain 0 -> 1 -> ... -> W-1 (reversed: W-1 -> ... -> 0)
  // in K chunks: K + W - 2 rounds of (latency + n/K / bandwidth); K
  // minimises that for the chain's slowest hop (the analytic formula is its
  // limit, K -> inf with no per-chunk latency).
  double chain(int w, double n, bool reversed) {
    Hop worst = route(cluster_, 0, 1);
    for (int r = 1; r + 1 < w; ++r) {
      const Hop h = route(cluster_, r, r + 1);
      if (1e3 * h.latency.us() + n / h.bandwidth_GBps > 1e3 * worst.latency.us() + n / worst.bandwidth_GBps) worst = h;
    }
    const double lat = 1e3 * worst.latency.us();
    const double ideal = lat > 0 ? std::sqrt((w - 2) * n / (worst.bandwidth_GBps * lat)) : 64.0;
    const int k = static_cast<int>(std::clamp(std::llround(ideal), 1LL, 64LL));
    const auto hop = [&](int i) { return reversed ? Pair(w - 1 - i, w - 2 - i) : Pair(i, i + 1); };
    // Hop i carries chunk c in round i + c: round t holds hops t-k+1 .. t.
    // The pipeline fills and drains, so its rounds differ.
    double total = 0;
    if (rounds_share_no_link()) {
      // A round's transfers then run side by side untouched: it lasts as long
      // as its slowest transfer alone. Each hop is simulated alone once, and
      // each round is the largest of its window (a sliding maximum).
      std::vector<double> solo(static_cast<std::size_t>(w - 1));
      const Scaled scaled(ledger_, k);  // each hop carries its k chunks, alone on its links
      for (int i = 0; i + 1 < w; ++i) solo[static_cast<std::size_t>(i)] = step({hop(i)}, n / k);
      std::deque<int> window;  // hops of the round, their solo times decreasing
      for (int t = 0; t < k + w - 2; ++t) {
        if (t < w - 1) {
          while (!window.empty() && solo[static_cast<std::size_t>(window.back())] <= solo[static_cast<std::size_t>(t)]) window.pop_back();
          window.push_back(t);
        }
        while (window.front() < t - k + 1) window.pop_front();
        total += solo[static_cast<std::size_t>(window.front())];
      }
      return total;
    }
    for (int t = 0; t < k + w - 2; ++t) {
      std::vector<Pair> round;
      for (int i = std::max(0, t - k + 1); i <= std::min(t, w - 2); ++i) round.push_back(hop(i));
      total += step(round, n / k);
    }
    return total;
  }

  // gloo's broadcast (models::Broadcast::kBinomialTree): in the round of
  // `span` (1, 2, 4, ...) each rank below span sends the whole buffer to the
  // rank span places on; a round's transfers run at once (sharing what
  // links they share), the rounds one after the other.
  double binomial_tree(int w, double n) {
    double total = 0;
    for (const std::vector<Pair>& round : models::binomial_tree_rounds(w)) total += step(round, n);
    return total;
  }

  // Open MPI's binomial all-reduce (Algorithm::kBinomial): up the tree a
  // round at a time, then down it a wave at a time, each wave's sends at
  // once (a parent's to all its children sharing its links, and what else
  // they cross). On links all alike the waves end as the analytic engine's
  // chains do; where a node's messages share its NIC or uplink, later.
  double binomial_all_reduce(int w, double n) {
    double total = 0;
    for (const std::vector<Pair>& round : models::binomial_up_rounds(w)) total += step(round, n);
    for (const std::vector<Pair>& wave : models::binomial_down_waves(w)) total += step(wave, n);
    return total;
  }

  // Whether the transfers of one round of a chain share no link: every link
  // is full duplex (a GPU forwards to the next while it receives from the
  // one before, on the two directions of its link), and each node boundary,
  // NIC and leaf uplink direction carries one hop of a round.
  bool rounds_share_no_link() const {
    return cluster_.intra.full_duplex && (cluster_.nodes == 1 || cluster_.inter.full_duplex);
  }

  // The collective's duration in seconds, simulated on the idle platform.
  double execute(const sim::Collective& c, int w) {
    const double n = static_cast<double>(models::priced_as(c).bytes);
    switch (c.kind) {
      case sim::CollectiveKind::kAllReduce:
      case sim::CollectiveKind::kBarrier: {
        if (algorithm_ == Algorithm::kBinomial && c.kind == sim::CollectiveKind::kAllReduce) {
          return binomial_all_reduce(w, n);
        }
        if (!runs_hierarchical(algorithm_, cluster_, w)) return ring_steps(c.kind, w, n, 2 * (w - 1));
        // Under kAuto both run; a ledger keeps the links of the faster.
        Ledger* const outer = ledger_;
        Ledger ring_links, hierarchical_links;
        ring_links.scale = hierarchical_links.scale = outer != nullptr ? outer->scale : 1;
        if (outer != nullptr) ledger_ = &ring_links;
        const double ring = algorithm_ == Algorithm::kAuto ? ring_steps(c.kind, w, n, 2 * (w - 1)) : -1;
        if (outer != nullptr) ledger_ = &hierarchical_links;
        const int g = cluster_.gpus_per_node, nodes = w / g;
        std::vector<Pair> intra, inter;
        for (int k = 0; k < nodes; ++k) {
          for (const Pair& p : ring_pairs(k * g, g, 1)) intra.push_back(p);
        }
        for (int i = 0; i < g; ++i) {
          for (const Pair& p : ring_pairs(i, nodes, g)) inter.push_back(p);
        }
        const double hierarchical = steps(intra, n / g, g - 1)                        // reduce-scatter
                                    + steps(inter, n / (g * nodes), 2 * (nodes - 1))  // G ring all-reduces of n/G
                                    + steps(intra, n / g, g - 1);                     // all-gather
        ledger_ = outer;
        const bool ring_wins = ring >= 0 && ring <= hierarchical;
        if (outer != nullptr) outer->merge(ring_wins ? ring_links : hierarchical_links);
        return ring_wins ? ring : hierarchical;  // kAuto: the faster
      }
      case sim::CollectiveKind::kAllGather:
      case sim::CollectiveKind::kReduceScatter: {  // W-1 ring steps of bytes / W, one way or the other
        return ring_steps(c.kind, w, n, w - 1);
      }
      case sim::CollectiveKind::kBroadcast:
        if (broadcast_ == models::Broadcast::kBinomialTree) return binomial_tree(w, n);
        return chain(w, n, false);
      case sim::CollectiveKind::kReduce:  // the broadcast's chain, run from the last rank to the root
        return chain(w, n, true);
      case sim::CollectiveKind::kAllToAll:
        // Every pair of ranks would need a route, W^2 of them, before the
        // platform is sealed; no training program issues one yet.
        throw std::invalid_argument("all_to_all is not simulated on SimGrid (the analytic engine prices it)");
    }
    throw std::logic_error("unknown collective kind");
  }

  Platform& platform_;
  ClusterSpec cluster_;
  sim::Time launch_;
  Algorithm algorithm_;
  models::Broadcast broadcast_;
  bool memoize_;
  // Within time(): no rank's links slowed (every node's links alike), and
  // routes inside nodes apart from those between them: a step runs in parts.
  bool parts_apart_ = false;
  Ledger* ledger_ = nullptr;  // within link_loads(): where step_together enters its links
  SimgridStats& stats_;
  // A collective as time() simulates it: kind, bytes, W and the slow links among its ranks.
  using Key = std::tuple<int, std::int64_t, int, std::vector<std::pair<int, double>>>;
  static Key key_of(const sim::Collective& c, int w, const std::vector<SlowLink>& given_slow) {
    std::vector<std::pair<int, double>> slow;
    for (const SlowLink& s : given_slow) {
      if (s.rank < w && s.factor > 1 && w > 1) slow.emplace_back(s.rank, s.factor);
    }
    return {static_cast<int>(c.kind), c.bytes, w, std::move(slow)};
  }
  std::map<Key, sim::Time> memo_;
  std::map<Key, Ledger> ledgers_;  // each collective's link loads, from its first simulation
};

std::atomic<bool> g_used{false};

}  // namespace

namespace {

SimgridStats run(const ClusterSpec& cluster, sim::Time launch_overhead, Algorithm algorithm, const std::vector<int>& world_sizes,
                 const SimgridOptions& options, const std::function<void(CollectiveTimer&)>& body,
                 const std::vector<std::vector<int>>& groups, models::Broadcast broadcast) {
  for (const auto& [key, value] : options.config) {
    const auto& ok = simgrid_settable();
    if (std::find(ok.begin(), ok.end(), key) == ok.end()) throw std::invalid_argument("not a SimGrid setting ddpsim passes on: " + key);
  }
  if (g_used.exchange(true)) throw std::logic_error("SimGrid runs once per process (simgrid/simgrid#185)");
  char name[] = "ddpsim";
  char log[] = "--log=root.thres:critical";
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer the actors run on threads, whose stacks it knows:
  // on SimGrid's own stacks an exception thrown in an actor leaves stale
  // poison there and ASan reports a false overflow. 4x slower (1.4 -> 5.6 s
  // for 4,096 GPUs with auto), so only here; a factory is chosen when the
  // engine is built, so it is an argument, not a set_config.
  char factory[] = "--cfg=contexts/factory:thread";
  char* argv[] = {name, log, factory, nullptr};
  int argc = 3;
#else
  char* argv[] = {name, log, nullptr};
  int argc = 2;
#endif
  sg4::Engine engine(&argc, argv);
  // An uncontended transfer costs exactly latency + bytes / bandwidth:
  // CM02 without its TCP window bound (gamma 0) and without the reverse
  // traffic of acknowledgements (docs/cost-models.md#the-simgrid-engine).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  for (const auto& [key, value] : options.config) sg4::Engine::set_config(key + ":" + value);

  int max_w = 1;
  for (int w : world_sizes) max_w = std::max(max_w, w);
  if (max_w > cluster.gpus()) throw std::invalid_argument("world size larger than the cluster");
  Platform platform(cluster, max_w);
  for (int w : world_sizes) {
    for (const Pair& p : collective_routes(cluster, algorithm, broadcast, w)) platform.add_route(p.first, p.second);
  }
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      if (r < 0 || r >= max_w) throw std::invalid_argument("a process group's rank outside the platform's world size");
    }
    for (const Pair& p : ring_of(ranks)) platform.add_route(p.first, p.second);
  }
  platform.seal();

  SimgridStats stats;
  stats.hosts = max_w;
  stats.links = platform.link_count();
  std::exception_ptr failure;
  SimgridTimer timer(platform, cluster, launch_overhead, algorithm, broadcast, options.memoize, stats);
  sg4::Actor::create("ddpsim", platform.host(0), [&] {
    try {
      body(timer);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  engine.run();
  if (failure) std::rethrow_exception(failure);
  return stats;
}

}  // namespace

}  // namespace ddpsim::netsim

// The module's entry point (netsim/loader.cpp finds it with dlsym).
extern "C" ddpsim::netsim::SimgridStats ddpsim_netsim_run(const ddpsim::netsim::RunRequest& r) {
  static const std::vector<std::vector<int>> kNoGroups;
  return ddpsim::netsim::run(*r.cluster, r.launch_overhead, r.algorithm, *r.world_sizes, *r.options, *r.body,
                             r.groups != nullptr ? *r.groups : kNoGroups, r.broadcast);
}
