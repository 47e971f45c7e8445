// DDP's communication hooks: per bucket, the compute and the all-reduces of
// one step, from PyTorch 1.13's default_hooks.py and powerSGD_hook.py (the
// functions named at each step below); docs/cost-models.md#communication-hooks.

#include "models/comm_hook.hpp"

#include <algorithm>
#include <cmath>

#include "models/reducer.hpp"

namespace ddpsim::models {

namespace {

const std::vector<std::string_view> kNames{"allreduce", "fp16_compress", "bf16_compress", "powerSGD",
                                           "batched_powerSGD"};

sim::Time seconds(double s) { return sim::Time::from_ns(s * 1e9, "a comm hook's compute time (ddp.comm_hook's costs)"); }

// The hook's compute, summed as it is priced: bytes passed over, cast,
// matrix products (flops, bytes read) and torch calls.
class Work {
 public:
  explicit Work(const HookCost& c) : cost_(c) {}
  Work& ops(std::int64_t n) {
    t_ += cost_.per_op * n;
    return *this;
  }
  Work& pass(double bytes) { return add(bytes / cost_.pass_bytes_per_s); }
  Work& cast(double bytes) { return add(bytes / cost_.cast_bytes_per_s); }
  Work& alloc(double bytes) { return cost_.alloc_bytes_per_s > 0 ? add(bytes / cost_.alloc_bytes_per_s) : *this; }
  // torch.bmm of an n x m matrix with an m x r (or n x r) one: 2 n m r
  // flops, the n x m matrix read (or written) once; whichever binds.
  Work& matmul(double n, double m, double r, double elem) {
    return ops(1).add(std::max(2 * n * m * r / cost_.matmul_flops_per_s, n * m * elem / cost_.pass_bytes_per_s));
  }
  // _orthogonalize of an n x r matrix: Gram-Schmidt for r <= 2 (a norm and
  // a division a column, then three passes over the columns after it), else
  // torch.linalg.qr (about 2 n r^2 flops).
  Work& orthogonalize(double n, int r, double elem) {
    if (r <= 2) {
      const double passes = 2.0 * r + 1.5 * r * (r - 1);
      return ops(2 * r + 4 * (r - 1)).pass(passes * n * elem);
    }
    return ops(2).add(std::max(2 * n * r * r / cost_.matmul_flops_per_s, 2 * n * r * elem / cost_.pass_bytes_per_s));
  }
  sim::Time take() {
    const sim::Time out = t_ + seconds(s_);
    t_ = {};
    s_ = 0;
    return out;
  }

 private:
  Work& add(double s) {
    s_ += s;
    return *this;
  }
  const HookCost& cost_;
  sim::Time t_;
  double s_ = 0;
};

struct Matrix {
  std::int64_t n = 1, m = 1;
  int r = 1;
};

// powerSGD_hook's view of a gradient: tensor.view(tensor.shape[0], -1).
Matrix as_matrix(const Tensor& t, int rank) {
  Matrix x;
  x.n = t.shape.empty() ? 1 : std::max<std::int64_t>(1, t.shape.front());
  x.m = std::max<std::int64_t>(1, t.numel() / x.n);
  x.r = static_cast<int>(std::min<std::int64_t>({x.n, x.m, rank}));
  return x;
}

// _should_compress: (n + m) r x min_compression_rate < n m.
bool should_compress(const Matrix& x, double min_rate) {
  return static_cast<double>((x.n + x.m) * x.r) * min_rate < static_cast<double>(x.n * x.m);
}

void all_reduce(BucketHookPlan& p, std::int64_t bytes) {
  p.chain.push_back({true, bytes, {}});
  p.wire_bytes += bytes;
}
void callback(BucketHookPlan& p, sim::Time t) { p.chain.push_back({false, 0, t}); }

// fp16_compress_hook / bf16_compress_hook: buffer().to(half).div_(W) at the
// hook; the half buffer all-reduced; decompress() copies it back.
void plan_cast(BucketHookPlan& p, const HookCost& cost, std::int64_t elements) {
  Work w(cost);
  p.at_hook = w.ops(2).alloc(2.0 * static_cast<double>(elements)).cast(static_cast<double>(p.input_bytes)).take();
  all_reduce(p, 2 * elements);
  callback(p, w.ops(1).cast(static_cast<double>(p.input_bytes)).take());
}

// powerSGD_hook past start_powerSGD_iter.
void plan_powersgd(BucketHookPlan& p, const CommHook& hook, const ModelSpec& model, const Bucket& bucket,
                   bool first_compressed) {
  const PowerSgdOptions& o = hook.powersgd;
  const double elem = static_cast<double>(element_size(bucket.dtype));
  const double total = static_cast<double>(p.input_bytes);
  std::vector<Matrix> compressed;
  double uncompressed_bytes = 0;
  std::int64_t uncompressed_tensors = 0, ps = 0, qs = 0;
  for (int i : bucket.params) {
    const Tensor& t = model.parameters[static_cast<std::size_t>(i)];
    const Matrix x = as_matrix(t, o.matrix_approximation_rank);
    if (should_compress(x, o.min_compression_rate)) {
      compressed.push_back(x);
      ps += x.n * x.r;
      qs += x.m * x.r;
    } else {
      uncompressed_bytes += static_cast<double>(t.bytes());
      ++uncompressed_tensors;
    }
  }
  Work w(hook.cost);
  // At the hook: error feedback's add and clone, the uncompressed tensors
  // concatenated, each Q orthogonalised (drawn first without warm start),
  // P = M Q; then the uncompressed all-reduce is launched.
  w.ops(8 + uncompressed_tensors);
  if (o.use_error_feedback) w.pass(2 * total).alloc(total);  // add_, then clone into a fresh tensor
  // The first compressed step creates the error buffer (torch.zeros); it and
  // every step without warm start, P and Q's memory (torch.empty).
  if (first_compressed && o.use_error_feedback) w.ops(1).pass(total).alloc(total);
  if (first_compressed || !o.warm_start) w.ops(2).alloc(static_cast<double>(ps + qs) * elem);
  w.pass(uncompressed_bytes).alloc(uncompressed_bytes);      // torch.cat: a fresh tensor
  for (const Matrix& x : compressed) {
    w.ops(5);
    if (first_compressed || !o.warm_start) w.ops(2).pass(static_cast<double>(x.m * x.r) * elem);
    w.orthogonalize(static_cast<double>(x.m), x.r, elem).matmul(static_cast<double>(x.n), static_cast<double>(x.m), x.r, elem);
  }
  p.at_hook = w.take();
  all_reduce(p, static_cast<std::int64_t>(uncompressed_bytes));
  // unpack_uncompressed_tensors_and_allreduce_ps: divide, copy back, launch P's all-reduce.
  callback(p, w.ops(2 + 2 * uncompressed_tensors).pass(2 * uncompressed_bytes).take());
  all_reduce(p, ps * static_cast<std::int64_t>(elem));
  // compute_qs: each P orthogonalised, Q = M^T P, launch Q's all-reduce.
  w.ops(2);
  for (const Matrix& x : compressed) {
    w.orthogonalize(static_cast<double>(x.n), x.r, elem).ops(1).matmul(static_cast<double>(x.n), static_cast<double>(x.m), x.r, elem);
  }
  callback(p, w.take());
  all_reduce(p, qs * static_cast<std::int64_t>(elem));
  // decompress: Q divided, M = P Q^T, error feedback's subtraction.
  w.ops(2).pass(static_cast<double>(qs) * elem);
  for (const Matrix& x : compressed) w.ops(1).matmul(static_cast<double>(x.n), static_cast<double>(x.m), x.r, elem);
  if (o.use_error_feedback) w.ops(1).pass(total).alloc(total);  // input_tensor_cp - input_tensor: a fresh tensor
  callback(p, w.take());
}

// batched_powerSGD_hook past start_powerSGD_iter: the bucket zero-padded to
// a square of side ceil(sqrt(length)), one P and one Q of side x rank.
void plan_batched(BucketHookPlan& p, const CommHook& hook, const Bucket& bucket, std::int64_t elements) {
  const PowerSgdOptions& o = hook.powersgd;
  const double elem = static_cast<double>(element_size(bucket.dtype));
  const auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(elements))));
  const double padded = static_cast<double>(side * side) * elem;
  const int r = o.matrix_approximation_rank;
  const double s = static_cast<double>(side);
  Work w(hook.cost);
  w.ops(8).pass(padded - static_cast<double>(p.input_bytes));  // resize_ and the padding's fill
  if (o.use_error_feedback) w.pass(2 * padded).alloc(padded);
  p.at_hook = w.orthogonalize(s, r, elem).matmul(s, s, r, elem).take();
  all_reduce(p, side * r * static_cast<std::int64_t>(elem));
  callback(p, w.ops(2).orthogonalize(s, r, elem).matmul(s, s, r, elem).take());  // compute_q
  all_reduce(p, side * r * static_cast<std::int64_t>(elem));
  w.ops(3).matmul(s, s, r, elem);  // decompress
  if (o.use_error_feedback) w.ops(1).pass(padded).alloc(padded);
  callback(p, w.take());
}

}  // namespace

std::string_view to_string(CommHookKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

std::optional<CommHookKind> parse_comm_hook(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<CommHookKind>(i);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& comm_hook_names() { return kNames; }

HookCost default_hook_cost(bool gpu) {
  // Stated, not measured: a recent GPU's memory bandwidth and a framework
  // call's launch; one CPU core's. docs/cost-models.md#communication-hooks.
  if (gpu) return {1000e9, 1000e9, 20e12, 0, sim::Time::from_us(10), false};
  return {2e9, 4e9, 20e9, 2e9, sim::Time::from_us(5), false};
}

bool CommHook::compresses(int step) const {
  switch (kind) {
    case CommHookKind::kAllReduce: return false;
    case CommHookKind::kFp16Compress:
    case CommHookKind::kBf16Compress: return true;
    case CommHookKind::kPowerSgd:
    case CommHookKind::kBatchedPowerSgd: return step >= powersgd.start_powerSGD_iter;
  }
  return false;
}

int CommHook::compressed_steps(int from, int to) const {
  int n = 0;
  for (int g = from; g < to; ++g) n += compresses(g) ? 1 : 0;
  return n;
}

sim::Time BucketHookPlan::compute() const {
  sim::Time t = at_hook;
  for (const HookStage& s : chain) t += s.time;
  return t;
}

BucketHookPlan plan_bucket_hook(const CommHook& hook, const ModelSpec& model, const Bucket& bucket, bool compressing,
                                bool first_compressed) {
  BucketHookPlan p;
  p.input_bytes = bucket.bytes;
  const std::int64_t elements = bucket.bytes / element_size(bucket.dtype);
  if (!compressing || hook.kind == CommHookKind::kAllReduce) {
    all_reduce(p, bucket.bytes);  // _allreduce_fut: the bucket as it is
    return p;
  }
  switch (hook.kind) {
    case CommHookKind::kFp16Compress:
    case CommHookKind::kBf16Compress: plan_cast(p, hook.cost, elements); break;
    case CommHookKind::kPowerSgd: plan_powersgd(p, hook, model, bucket, first_compressed); break;
    case CommHookKind::kBatchedPowerSgd: plan_batched(p, hook, bucket, elements); break;
    case CommHookKind::kAllReduce: break;
  }
  return p;
}

std::int64_t comm_hook_state_bytes(const CommHook& hook, const ModelSpec& model, const std::vector<Bucket>& buckets) {
  if (!hook.powersgd_family()) return 0;
  const PowerSgdOptions& o = hook.powersgd;
  std::int64_t bytes = 0;
  for (const Bucket& b : buckets) {
    const std::int64_t elem = element_size(b.dtype);
    const std::int64_t elements = b.bytes / elem;
    if (hook.kind == CommHookKind::kBatchedPowerSgd) {
      const auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(elements))));
      if (o.use_error_feedback) bytes += side * side * elem;
      if (o.warm_start) bytes += 2 * side * o.matrix_approximation_rank * elem;
      continue;
    }
    if (o.use_error_feedback) bytes += b.bytes;
    if (!o.warm_start) continue;
    for (int i : b.params) {
      const Matrix x = as_matrix(model.parameters[static_cast<std::size_t>(i)], o.matrix_approximation_rank);
      if (should_compress(x, o.min_compression_rate)) bytes += (x.n + x.m) * x.r * elem;
    }
  }
  return bytes;
}

}  // namespace ddpsim::models
