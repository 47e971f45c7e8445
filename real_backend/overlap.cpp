#include "real_backend/overlap.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace ddpsim::real {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One chunk of compute: a product of two square matrices, kept so it is not optimised away.
struct Chunk {
  Eigen::MatrixXf a, b, c;
  explicit Chunk(int n) : a(Eigen::MatrixXf::Random(n, n)), b(Eigen::MatrixXf::Random(n, n)), c(n, n) {}
  void run() { c.noalias() = a * b; }
};

constexpr CollectiveLabel kLabel{CollectiveLabel::Kind::kSweep, -1, -1};

formats::OverlapSize one_size(Transport& t, Chunk& chunk, std::int64_t bytes, const OverlapOptions& o) {
  std::vector<float> data(static_cast<std::size_t>(std::max<std::int64_t>(1, bytes / 4)), 1.0f);
  t.wait(t.all_reduce_async(data.data(), data.size(), kLabel));  // warm-up
  std::vector<double> chunk_ms, alone_ms, both_ms, beside;
  for (int rep = 0; rep < o.reps; ++rep) {
    double t0 = now_ms();
    for (int i = 0; i < o.chunks; ++i) chunk.run();
    chunk_ms.push_back((now_ms() - t0) / o.chunks);
    t.barrier();
    t0 = now_ms();
    t.wait(t.all_reduce_async(data.data(), data.size(), kLabel));
    alone_ms.push_back(now_ms() - t0);
    t.barrier();
    t0 = now_ms();
    const std::uint64_t ticket = t.all_reduce_async(data.data(), data.size(), kLabel);
    int n = 0;
    for (; !t.is_done(ticket); ++n) chunk.run();
    t.wait(ticket);
    both_ms.push_back(now_ms() - t0);
    beside.push_back(n);
  }
  return {static_cast<std::int64_t>(data.size()) * 4, median(chunk_ms), median(alone_ms), median(both_ms), median(beside)};
}

}  // namespace

formats::OverlapMeasurement measure_overlap(Transport& transport, const OverlapOptions& options) {
  if (transport.world_size() < 2) throw std::invalid_argument("overlap: one rank has nothing to overlap; run it on 2 or more");
  Chunk chunk(options.matrix);
  for (int i = 0; i < options.chunks; ++i) chunk.run();  // warm-up
  formats::OverlapMeasurement m;
  m.backend = transport.name();
  m.device = "cpu";
  m.world_size = transport.world_size();
  m.threads = 1;
  for (const std::int64_t bytes : options.sizes) m.sizes.push_back(one_size(transport, chunk, bytes, options));
  if (const std::optional<formats::Slowdowns> pair = formats::pooled_slowdowns(m.sizes)) {
    m.compute_slowdown = pair->compute;
    m.comm_slowdown = pair->comm;
  }
  return m;
}

}  // namespace ddpsim::real
