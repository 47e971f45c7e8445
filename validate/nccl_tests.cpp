// nccl-tests output, predicted tables and the fit of NCCL's model
// (validate/nccl_tests.hpp).

#include "validate/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "models/ddp_job.hpp"
#include "models/nccl_model.hpp"
#include "loader/input_error.hpp"
#include "validate/median.hpp"

namespace ddpsim::validate {
namespace {

using scenarios::InputError;

std::optional<double> number(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::logic_error&) {
  }
  return std::nullopt;
}

// The column of token k of `line` (1-based), for errors.
int column_of(const std::string& line, std::size_t k) {
  std::istringstream in(line);
  std::string token;
  std::size_t pos = 0;
  for (std::size_t i = 0; i <= k && in >> token; ++i) {
    pos = line.find(token, pos);
    if (i < k) pos += token.size();
  }
  return static_cast<int>(pos) + 1;
}

bool is_rank_line(const std::string& line) {
  std::istringstream in(line);
  std::string hash, word, number;
  return in >> hash >> word >> number && hash == "#" && word == "Rank" && std::all_of(number.begin(), number.end(), ::isdigit);
}

}  // namespace

NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& file) {
  NcclTestsTable out;
  out.file = file;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (is_rank_line(line.substr(first))) ++out.ranks;
      continue;
    }
    std::istringstream words(line);
    std::vector<std::string> t;
    for (std::string w; words >> w;) t.push_back(w);
    const std::string expected = "expected an nccl-tests row: size count type redop root time algbw busbw #wrong ...";
    if (t.size() < 8) throw InputError({file, n, static_cast<int>(first) + 1}, "", line.substr(first, 40), expected);
    const std::optional<double> size = number(t[0]), time = number(t[5]);
    if (!size || *size < 0 || *size > 1e15 || std::floor(*size) != *size) {
      throw InputError({file, n, column_of(line, 0)}, "size", t[0], "expected a size in bytes, a whole number");
    }
    if (!time || *time < 0) {
      throw InputError({file, n, column_of(line, 5)}, "time", t[5], "expected the out-of-place time in us, a number >= 0");
    }
    out.rows.push_back({static_cast<std::int64_t>(*size), *time});
  }
  if (out.rows.empty()) throw InputError({file, 0, 0}, "", "", "expected nccl-tests output: no row of sizes and times");
  return out;
}

NcclTestsTable read_nccl_tests(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "", "expected a readable nccl-tests output file (cannot open it)");
  std::stringstream s;
  s << in.rdbuf();
  if (s.str().size() > (std::size_t{16} << 20)) throw InputError({path, 0, 0}, "", "", "expected at most 16 MiB of nccl-tests output");
  return parse_nccl_tests(s.str(), path);
}

double algbw_GBps(std::int64_t bytes, double time_us) { return time_us > 0 ? static_cast<double>(bytes) / (1000 * time_us) : 0; }

double busbw_GBps(sim::CollectiveKind kind, std::int64_t bytes, double time_us, int ranks) {
  const double n = ranks;
  switch (kind) {
    case sim::CollectiveKind::kAllReduce: return algbw_GBps(bytes, time_us) * 2 * (n - 1) / n;
    case sim::CollectiveKind::kAllGather:
    case sim::CollectiveKind::kReduceScatter:
    case sim::CollectiveKind::kAllToAll: return algbw_GBps(bytes, time_us) * (n - 1) / n;
    case sim::CollectiveKind::kBroadcast:
    case sim::CollectiveKind::kReduce:
    case sim::CollectiveKind::kBarrier: return algbw_GBps(bytes, time_us);
  }
  return 0;
}

std::optional<sim::CollectiveKind> parse_collective_kind(const std::string& name) {
  for (sim::CollectiveKind k : {sim::CollectiveKind::kAllReduce, sim::CollectiveKind::kAllGather,
                                sim::CollectiveKind::kReduceScatter, sim::CollectiveKind::kBroadcast,
                                sim::CollectiveKind::kReduce, sim::CollectiveKind::kAllToAll}) {
    if (sim::to_string(k) == name) return k;
  }
  return std::nullopt;
}

std::vector<PredictedRow> predict_collectives(const scenarios::Scenario& scenario, sim::CollectiveKind kind,
                                              const std::vector<std::int64_t>& sizes, int ranks) {
  const models::DdpJob& job = scenario.job;
  std::vector<PredictedRow> out;
  if (job.collective_model == models::CollectiveModel::kNccl) {
    const models::NcclTimer timer(*job.cluster, job.network.launch_overhead, job.nccl_bandwidth_scale);
    for (std::int64_t b : sizes) {
      const auto [us, choice] = timer.predict(kind, b, ranks);
      out.push_back({b, us, std::string(models::to_string(choice.algo)), std::string(models::to_string(choice.proto))});
    }
    return out;
  }
  models::AnalyticTimer timer(models::cluster_of(job, ranks), job.network.launch_overhead, job.algorithm);
  for (std::int64_t b : sizes) {
    const sim::Collective c{kind, b};
    out.push_back({b, timer.time(c, ranks, {}).us(), std::string(models::to_string(timer.algorithm_for(c, ranks))), "-"});
  }
  return out;
}

std::vector<std::int64_t> parse_size_range(const std::string& text, const std::string& option) {
  const auto bytes = [&](std::string s) -> std::optional<std::int64_t> {
    std::int64_t unit = 1;
    if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
      unit = s.back() == 'K' ? 1 << 10 : s.back() == 'M' ? 1 << 20 : std::int64_t{1} << 30;
      s.pop_back();
    }
    if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit) || s.size() > 12) return std::nullopt;
    return std::stoll(s) * unit;
  };
  const std::size_t colon = text.find(':');
  const auto lo = colon == std::string::npos ? std::nullopt : bytes(text.substr(0, colon));
  const auto hi = colon == std::string::npos ? std::nullopt : bytes(text.substr(colon + 1));
  constexpr std::int64_t kMax = std::int64_t{1} << 40;
  if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > kMax) {
    throw InputError({"the command line", 0, 0}, option, text,
                     "expected MIN:MAX in bytes, 1 <= MIN <= MAX <= 1T, with K, M or G for powers of 1,024 (8:16G)");
  }
  std::vector<std::int64_t> out;
  for (std::int64_t b = *lo; b <= *hi; b *= 2) out.push_back(b);
  return out;
}

NcclFit fit_nccl(const scenarios::Scenario& scenario, const std::vector<NcclTestsTable>& tables) {
  const models::DdpJob& job = scenario.job;
  if (job.collective_model != models::CollectiveModel::kNccl) {
    throw InputError({scenario.source, 0, 0}, "collective.model", "ring", "expected nccl: the fit is of NCCL's model");
  }
  const models::NcclTimer bare(*job.cluster, sim::Time{}, 1);
  // Relative least squares of t = f + L + k X in (f, k): each row weighed by 1 / t^2.
  double sw = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  struct Point {
    double latency, transfer, measured;
  };
  std::vector<Point> points;
  for (const NcclTestsTable& t : tables) {
    if (t.ranks < 2 || t.ranks > job.cluster->gpus()) {
      throw InputError({t.file, 0, 0}, "# Rank", std::to_string(t.ranks),
                       fmt::format("expected 2 to {} ranks (one '#  Rank' line each): the scenario's cluster", job.cluster->gpus()));
    }
    for (const NcclTestsRow& r : t.rows) {
      if (r.time_us <= 0) continue;
      const models::NcclCost c = bare.predict(sim::CollectiveKind::kAllReduce, r.bytes, t.ranks).second;
      const Point p{c.call_latency_us, static_cast<double>(r.bytes) / (1000 * c.call_bandwidth_GBps), r.time_us};
      const double w = 1 / (p.measured * p.measured), y = p.measured - p.latency;
      sw += w;
      sx += w * p.transfer;
      sxx += w * p.transfer * p.transfer;
      sy += w * y;
      sxy += w * p.transfer * y;
      points.push_back(p);
    }
  }
  if (points.size() < 2) throw InputError({tables.empty() ? scenario.source : tables.front().file, 0, 0}, "", "", "expected at least two rows to fit");
  const double det = sw * sxx - sx * sx;
  double f = det > 0 ? (sy * sxx - sx * sxy) / det : 0, k = det > 0 ? (sw * sxy - sx * sy) / det : 1;
  if (f < 0 || !(det > 0)) {
    f = std::max(0.0, f);
    k = sxx > 0 ? (sxy - f * sx) / sxx : 1;
  }
  if (!(k > 0)) k = 1;
  NcclFit fit{f, 1 / k, 0, static_cast<int>(points.size())};
  std::vector<double> errors;
  for (const Point& p : points) errors.push_back(100 * std::fabs(f + p.latency + k * p.transfer - p.measured) / p.measured);
  fit.median_error_pct = median(errors);
  return fit;
}

}  // namespace ddpsim::validate
