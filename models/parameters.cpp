#include "models/parameters.hpp"

#include <numeric>

namespace ddpsim::models {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat64: return "float64";
    case DType::kInt64: return "int64";
    case DType::kInt32: return "int32";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt64, DType::kInt32,
                  DType::kUInt8, DType::kBool}) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

std::int64_t element_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
    case DType::kInt64: return 8;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kUInt8:
    case DType::kBool: return 1;
  }
  return 1;
}

std::int64_t Tensor::numel() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t ModelSpec::parameter_count() const {
  std::int64_t n = 0;
  for (const Tensor& t : parameters) n += t.numel();
  return n;
}

std::int64_t ModelSpec::parameter_bytes() const {
  std::int64_t n = 0;
  for (const Tensor& t : parameters) n += t.bytes();
  return n;
}

std::int64_t ModelSpec::buffer_bytes() const {
  std::int64_t n = 0;
  for (const Tensor& t : buffers) n += t.bytes();
  return n;
}

sim::Time ModelSpec::forward_total() const { return std::accumulate(forward.begin(), forward.end(), sim::Time{}); }
sim::Time ModelSpec::backward_total() const { return std::accumulate(backward.begin(), backward.end(), sim::Time{}); }

std::vector<std::int64_t> spread_integer(std::int64_t total, const std::vector<std::int64_t>& weights) {
  // Largest-remainder free: cumulative rounding, so the parts add up exactly.
  const double sum = static_cast<double>(std::accumulate(weights.begin(), weights.end(), std::int64_t{0}));
  std::vector<std::int64_t> out(weights.size(), 0);
  if (sum <= 0) return out;
  std::int64_t acc_weight = 0;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    acc_weight += weights[i];
    const auto upto =
        static_cast<std::int64_t>(std::llround(static_cast<double>(total) * (static_cast<double>(acc_weight) / sum)));
    out[i] = upto - given;
    given = upto;
  }
  return out;
}

std::vector<sim::Time> spread_by_size(sim::Time total, const std::vector<std::int64_t>& weights) {
  std::vector<sim::Time> out;
  out.reserve(weights.size());
  for (std::int64_t part : spread_integer(total.count_ns(), weights)) out.push_back(sim::Time::ns(part));
  return out;
}

}  // namespace ddpsim::models
