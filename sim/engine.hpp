#pragma once
// The discrete-event engine: virtual ranks, each with a host, a compute and a
// communication stream, and collectives that rendezvous across a process
// group. It knows nothing about machine learning: a model issues operations
// and reads back what happened through an Observer.
//
// Ordering contract: events run in (time, insertion sequence) order, across
// ranks (Schedule::kTimeOrder) or within each rank between collectives
// (kRankMajor), so the same calls in the same order give the same run, on
// any machine.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective_library.hpp"
#include "sim/op_sink.hpp"
#include "sim/time.hpp"

namespace ddpsim::sim {

/// One finished operation, as observers see it.
struct OpRecord {
  int rank = 0;
  StreamKind stream = StreamKind::kHost;
  OpLabel label;
  Time ready;  ///< reached the head of its stream (previous op done)
  Time start;  ///< began executing (dependencies met; for a collective, all members arrived)
  Time end;
  std::optional<OpRef> after;  ///< the cross-stream dependency it waited for, if any
  bool is_collective = false;
  Collective collective;
  std::uint64_t group_seq = 0;  ///< per-group sequence number of the collective
  Time arrival;                 ///< joined the rendezvous (collectives only)
  GroupId group = 0;            ///< the collective's process group (collectives only)
};

class Observer {
 public:
  virtual ~Observer() = default;
  /// Called when an operation ends: in event order (Schedule::kTimeOrder),
  /// or each rank's in its time order, ranks interleaved (kRankMajor; with
  /// EngineOptions::threads above 1, for different ranks at once).
  virtual void on_op(const OpRecord& record) = 0;
};

class Engine;

/// A program driving one or more streams; woken when an awaited op ends.
class Process {
 public:
  virtual ~Process() = default;
  /// With kRankMajor on several threads, processes of different ranks wake
  /// at once: what they share, they keep per Engine::worker().
  virtual void on_wake(Engine& engine, std::uint64_t token) = 0;
};

/// Prices a collective over a group of the given size. Must be deterministic.
using CollectiveCostFn = std::function<Time(const Collective&, int group_size)>;

/// A collective in flight in a set of link-sharing groups: its group's
/// index among them and what the group runs (as sent: the library's view).
struct InFlight {
  int group = 0;
  Collective collective;
  friend bool operator==(const InFlight&, const InFlight&) = default;
};

/// Prices a collective of one of several process groups that share links
/// (Engine::add_sharing_groups): `group` is its group's index among them,
/// `in_flight` those whose collectives run now, by ascending index, `group`
/// among them. Returns how long it would take were that set in flight from
/// its start to its end. Must be deterministic.
using SharedCostFn = std::function<Time(const Collective&, int group, const std::vector<InFlight>& in_flight)>;

/// The order the engine runs events in. Both give every operation the same
/// ready, start, end and arrival times: each is a maximum of earlier ends
/// and arrivals, which no tie between events can move. They differ in the
/// order observers see the records, and in what they can simulate.
enum class Schedule : std::uint8_t {
  /// Every event in (time, insertion) order across ranks; anything the
  /// engine models. Observers see records in that order.
  kTimeOrder,
  /// Each rank in turn runs its own events in (time, insertion) order until
  /// it waits in a collective (the only place ranks meet), then the next
  /// rank; a collective's members go on once the last has arrived. A rank's
  /// state stays in cache while it runs, which is what makes a large world
  /// fast. Observers see each rank's records in its time order, ranks
  /// interleaved. An op's `after` and a woken process's enqueues must stay
  /// on its own rank. A crash, a collective whose members disagree, or one
  /// the watchdog would end (what they do to other ranks needs the global
  /// order) stops the run: run() returns RunSummary::needs_time_order, and
  /// the job is to be run again with kTimeOrder.
  kRankMajor,
};

struct EngineOptions {
  /// What each collective sends, what runs before it, what a disagreement
  /// or a dead peer does (not owned; none: plain_library()).
  const CollectiveLibrary* library = nullptr;
  /// A rank waiting this long in a collective aborts the job; zero: never.
  Time watchdog_timeout;
  Schedule schedule = Schedule::kTimeOrder;
  /// kRankMajor: threads that run a sweep's ranks at once, each a range of
  /// them (at most one per rank). The results do not depend on it. With
  /// more than one, observers' on_op and processes' on_wake run on several
  /// threads at once, for different ranks: Engine::worker() tells them apart.
  int threads = 1;
  /// Compute slowed by communication: while a collective is in flight on a
  /// rank (all members arrived, not yet done), the ops of its compute stream
  /// progress 1 + compute_slowdown times slower (docs/cost-models.md). Zero:
  /// never. Time order only: a rank-major run reports needs_time_order.
  double compute_slowdown = 0;
  /// Communication slowed by compute: while any live member of a collective
  /// in flight has an op running on its compute stream, the collective
  /// progresses 1 + comm_slowdown times slower (docs/cost-models.md). Zero:
  /// never. Time order only, as compute_slowdown.
  double comm_slowdown = 0;
};

/// Why a stream could not finish when the events ran out.
struct BlockedOp {
  int rank = 0;
  StreamKind stream = StreamKind::kHost;
  OpLabel label;
  Time since;                  ///< when the op reached the head of its stream
  bool in_rendezvous = false;  ///< true: waits for other members of a collective
  GroupId group = 0;
  std::uint64_t group_seq = 0;
  Collective collective;
  std::vector<int> missing_ranks;  ///< members that never issued this collective
  std::optional<OpRef> waits_for;  ///< dependency-blocked: the op it waits for
  bool running = false;            ///< executing when the job was aborted
};

/// One member's side of a collective that never completed.
struct MemberState {
  int rank = 0;
  bool arrived = false;  ///< issued it and reached it on its stream
  Collective collective;
  OpLabel label;
  Time arrival;
};

/// A collective, by group sequence number, that did not complete.
struct OpenCollective {
  GroupId group = 0;
  std::uint64_t seq = 0;
  bool stalled = false;  ///< every member arrived, but their collectives disagree
  std::vector<MemberState> members;
};

struct Crash {
  int rank = 0;
  Time at;
  std::string message;
};

/// A collective that completed although its members' labels disagree: the
/// same sequence number carried different work on different ranks.
struct Misalignment {
  GroupId group = 0;
  std::uint64_t seq = 0;
  Time at;
  std::vector<int> ranks;
  std::vector<OpLabel> labels;  ///< by member
};

struct RunSummary {
  Time end;                     ///< time of the last event (or of the watchdog abort)
  std::uint64_t events = 0;     ///< events processed (kRankMajor: a collective's end counts once per member; run_levelized: one per op per rank)
  std::uint64_t rank_ops = 0;   ///< operations completed, summed over ranks
  std::vector<BlockedOp> blocked;      ///< streams that still held work: empty unless the run hung
  std::vector<OpenCollective> open;    ///< collectives that never completed, by (group, seq)
  std::vector<Crash> crashes;          ///< ranks that died, in order
  std::vector<Misalignment> misalignments;
  std::optional<Time> watchdog_at;     ///< when the watchdog aborted the job
  std::optional<std::pair<GroupId, std::uint64_t>> watchdog_collective;  ///< the one that timed out
  /// kRankMajor only: the run reached what only kTimeOrder simulates, and
  /// why; it stopped there, and nothing else in the summary means anything.
  std::optional<std::string> needs_time_order;
  bool hung() const { return !blocked.empty() || watchdog_at.has_value(); }
};

class Engine final : public OpSink {
 public:
  Engine(int world_size, CollectiveCostFn cost, EngineOptions options = {});
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int world_size() const;
  /// The current time: while an event runs, its time.
  Time now() const;
  /// Which of the workers() threads runs the calling process or observer
  /// (0 outside a run): for state processes of different ranks share.
  int worker() const;
  int workers() const;
  static constexpr GroupId kWorld = kWorldGroup;
  /// A new process group of `ranks` (distinct, in the order given), like
  /// torch.distributed.new_group: its collectives are matched among its
  /// members by its own sequence numbers and priced over its size.
  GroupId add_group(const std::vector<int>& ranks);
  /// The same, its collectives run on each member's `stream` (a second NCCL
  /// stream: another communicator's) and priced by `cost` (its members'
  /// topology) when given. A group off the comm stream is time order's only:
  /// a rank-major run stops with needs_time_order.
  GroupId add_group(const std::vector<int>& ranks, StreamKind stream, CollectiveCostFn cost);
  /// Process groups whose collectives share links, as hybrid sharding's
  /// replica groups share a node's NICs: each group runs its collectives on
  /// its members' `stream`; a collective in flight progresses at the rate
  /// `cost` gives for the set of the groups' collectives in flight, and is
  /// repriced whenever one of them starts or ends, once an instant
  /// (docs/cost-models.md#process-groups-at-once). Returns their ids, in
  /// order. Time order's only: a rank-major run stops with needs_time_order.
  std::vector<GroupId> add_sharing_groups(const std::vector<std::vector<int>>& groups, StreamKind stream,
                                          SharedCostFn cost);
  /// The same, group i on its members' streams[i] (hybrid sharding on PCIe
  /// nodes: the shard groups on the comm stream, the replica groups on
  /// another).
  std::vector<GroupId> add_sharing_groups(const std::vector<std::vector<int>>& groups,
                                          const std::vector<StreamKind>& streams, SharedCostFn cost);

  /// Observers are not owned and must outlive run().
  void add_observer(Observer& observer);

  using OpSink::enqueue;
  using OpSink::enqueue_collective;
  OpRef enqueue(int rank, StreamKind stream, Time duration, OpLabel label, std::optional<OpRef> after) override;
  /// One starts when every member has reached it, and lasts the cost model's time.
  OpRef enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                           std::optional<OpRef> after) override;
  /// Wakes `process` with `token` when `op` ends (at once, as an event, if it has).
  void wake_when_done(OpRef op, Process& process, std::uint64_t token);

  /// The rank's process dies now: its queued work is dropped, it never joins
  /// another collective, and its peers fail as CollectiveLibrary::peer_died says.
  void crash(int rank, std::string message);
  /// The rank dies at `at` (a hardware fault, an OOM kill). Under
  /// kRankMajor either call ends the run (RunSummary::needs_time_order).
  void schedule_crash(int rank, Time at, std::string message);
  bool crashed(int rank) const;
  /// The rank's network link goes down at `at` (a cut cable, a dead switch
  /// port): its process lives on, but no collective it is a member of
  /// completes after that, those in flight included; their members wait in
  /// them until the watchdog, if any, aborts the job. Under kRankMajor it
  /// ends the run (RunSummary::needs_time_order).
  void schedule_link_down(int rank, Time at);
  /// At `at`, `change` runs and the collectives' prices change with it (a
  /// link that slows to a trickle: `change` updates what the cost functions
  /// read). Every collective in flight then keeps the fraction of its work
  /// done and does the rest at its new price; later ones are priced anew.
  /// Scheduled before run() (std::logic_error after); under kRankMajor it
  /// ends the run (RunSummary::needs_time_order).
  void schedule_price_change(Time at, std::function<void()> change);

  /// Runs until no event remains. Streams still holding operations then are
  /// reported as blocked: the simulation hung.
  RunSummary run();

  static std::uint32_t stream_id(int rank, StreamKind kind) {
    return static_cast<std::uint32_t>(rank) * kStreamsPerRank + static_cast<std::uint32_t>(kind);
  }

  /// The engine's state: sim/engine_core.hpp, with a schedule from sim/time_order.hpp or sim/rank_major.hpp (internal to engine.cpp).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpsim::sim
