#pragma once
// IEEE half precision for fp16_compress_hook (GCC's _Float16): a bucket's
// floats cast to half, sums taken in float and rounded back to half (as
// gloo and NCCL sum float16), and cast back.

#include <cstddef>

namespace ddpsim::real {

using Half = _Float16;

inline void to_half(const float* in, Half* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Half>(in[i]);
}
inline void from_half(const Half* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}
/// inout[i] += in[i], rounded to half.
inline void half_sum(const Half* in, Half* inout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) inout[i] = static_cast<Half>(static_cast<float>(in[i]) + static_cast<float>(inout[i]));
}

}  // namespace ddpsim::real
