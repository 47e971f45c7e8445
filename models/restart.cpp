#include "models/restart.hpp"

#include <cmath>

#include "sim/det_math.hpp"
#include <stdexcept>

#include "sim/random.hpp"

namespace ddpsim::models {
namespace {

constexpr std::uint64_t kFailureStream = 0x4641494c55524553ULL;  // "FAILURES"
constexpr double kMsPerHour = 3.6e6;

sim::Time transfer(double gb, double gbps) {
  return sim::Time::from_ms(gb / gbps * 1000.0,
                            "a checkpoint's write or read time (checkpoint.size_gb over write_GBps or read_GBps)");
}

}  // namespace

sim::Time CheckpointSpec::write_cost() const { return transfer(size_gb, write_gbps); }
sim::Time CheckpointSpec::load_cost() const { return transfer(size_gb, read_gbps); }

double young_interval(double c, double m) { return std::sqrt(2 * c * m); }

double daly_interval(double c, double m) {
  if (c >= 2 * m) return m;
  const double x = c / (2 * m);
  return std::sqrt(2 * c * m) * (1 + std::sqrt(x) / 3 + x / 9) - c;
}

double expected_goodput(double tau, double c, double r, double m) {
  return tau / (m * sim::det_exp(r / m) * (sim::det_exp((tau + c) / m) - 1));
}

RestartReport simulate_restarts(const FailureSpec& f, const CheckpointSpec& ck, int world_size, std::uint64_t seed) {
  if (f.mtbf_hours <= 0 || f.horizon_hours <= 0) throw std::invalid_argument("MTBF and horizon must be positive");
  if (ck.interval <= sim::Time::zero()) throw std::invalid_argument("checkpoint interval must be positive");
  RestartReport out;
  out.horizon_hours = f.horizon_hours;
  const double job_mtbf_ms = f.mtbf_hours * kMsPerHour / (f.per_gpu ? world_size : 1);
  out.job_mtbf_minutes = job_mtbf_ms / 60000;
  const sim::Time detect = f.detection == Detection::kWatchdog ? f.watchdog : f.heartbeat;
  const sim::Time write = ck.async ? sim::Time::zero() : ck.write_cost();
  const sim::Time horizon = sim::Time::from_ms(f.horizon_hours * kMsPerHour, "the failure horizon (failures.horizon_hours)");

  sim::Rng rng = sim::Rng::for_stream(seed, {kFailureStream, static_cast<std::uint64_t>(world_size)});
  const auto next_gap = [&] {
    return sim::Time::from_ms(sim::draw_exponential(rng, job_mtbf_ms), "a drawn time between failures (failures.mtbf_hours)");
  };
  sim::Time now, work, latest, previous, stalls;  // work: training time done; latest/previous: checkpointed work
  sim::Time next_failure = next_gap();
  bool first = true;
  while (now < horizon) {
    const sim::Time to_checkpoint = ck.interval - (work - latest);
    if (now + to_checkpoint < next_failure && now + to_checkpoint < horizon) {
      now += to_checkpoint;
      work += to_checkpoint;
      // A checkpoint counts once written; a failure during the write loses it.
      const sim::Time done = now + ck.write_cost();
      now += write;
      stalls += write;
      if (done <= next_failure) {
        previous = latest;
        latest = work;
      }
      continue;
    }
    if (next_failure >= horizon) {
      work += horizon - now;
      now = horizon;
      break;
    }
    work += next_failure - now;
    now = next_failure;
    Recovery r;
    r.at_hours = now.ms() / kMsPerHour;
    r.detection = detect;
    r.relaunch = f.relaunch;
    r.reload = ck.load_cost();
    sim::Time resume = latest;
    if (first && f.corrupt_latest && ck.keep_last >= 2) {
      r.fell_back = true;
      r.reload += ck.load_cost();  // the corrupt one is read (and rejected) first
      resume = previous;
    }
    r.recompute = work - resume;
    out.recoveries.push_back(r);
    now += r.detection + r.relaunch + r.reload;
    work = resume;
    latest = resume;
    first = false;
    next_failure = now + next_gap();
  }
  out.useful_hours = work.ms() / kMsPerHour;
  out.checkpoint_hours = stalls.ms() / kMsPerHour;
  out.goodput = out.useful_hours / f.horizon_hours;

  // The optimum, in minutes, of Daly's expected-time model.
  const double c = ck.write_cost().ms() / 60000, m = out.job_mtbf_minutes;
  const double r = (detect + f.relaunch + ck.load_cost()).ms() / 60000;
  out.young_minutes = young_interval(c, m);
  out.daly_minutes = daly_interval(c, m);
  // Golden-section search of the unimodal expected goodput over (0, 4M].
  double lo = 1e-6, hi = 4 * m;
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
    if (expected_goodput(a, c, r, m) < expected_goodput(b, c, r, m)) lo = a; else hi = b;
  }
  out.best_minutes = (lo + hi) / 2;
  out.expected_goodput_at_best = expected_goodput(out.best_minutes, c, r, m);
  out.expected_goodput_at_interval = expected_goodput(ck.interval.ms() / 60000, c, r, m);
  return out;
}

ElasticResume resume_epoch(const std::vector<std::int64_t>& order, std::int64_t dataset_size, std::int64_t consumed,
                           int new_world_size) {
  if (new_world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (consumed < 0 || consumed > static_cast<std::int64_t>(order.size())) throw std::invalid_argument("consumed out of range");
  ElasticResume out;
  out.consumed = consumed;
  std::vector<int> seen(static_cast<std::size_t>(dataset_size), 0);
  for (std::int64_t i = 0; i < consumed; ++i) ++seen[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
  std::vector<std::int64_t> rest;
  for (std::size_t i = static_cast<std::size_t>(consumed); i < order.size(); ++i) {
    const auto id = static_cast<std::size_t>(order[i]);
    if (seen[id] == 0) {  // padding repeats and already-consumed IDs are not re-sent
      rest.push_back(order[i]);
      seen[id] = -1;
    }
  }
  for (std::int64_t id = 0; id < dataset_size; ++id) {
    if (seen[static_cast<std::size_t>(id)] == 0) rest.push_back(id);  // dropped by drop_last: not an omission now
  }
  out.ranks.assign(static_cast<std::size_t>(new_world_size), {});
  for (std::size_t i = 0; i < rest.size(); ++i) out.ranks[i % static_cast<std::size_t>(new_world_size)].push_back(rest[i]);
  std::vector<int> count(static_cast<std::size_t>(dataset_size), 0);
  for (std::int64_t i = 0; i < consumed; ++i) ++count[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
  for (const auto& r : out.ranks) {
    for (std::int64_t id : r) ++count[static_cast<std::size_t>(id)];
  }
  for (std::int64_t id = 0; id < dataset_size; ++id) {
    if (count[static_cast<std::size_t>(id)] > 1) out.duplicates.push_back(id);
    if (count[static_cast<std::size_t>(id)] == 0) out.omissions.push_back(id);
  }
  return out;
}

}  // namespace ddpsim::models
