#pragma once
// ddpsim-real overlap: compute and an all-reduce alone and at once on every
// rank, the MPI side of the overlap micro-benchmark
// (docs/cost-models.md#measuring-both-the-overlap-micro-benchmark; the gloo
// side is python/ddpsim_torch/overlap_bench.py, the same method).

#include <cstdint>
#include <vector>

#include "formats/overlap_file.hpp"
#include "real_backend/transport.hpp"

namespace ddpsim::real {

struct OverlapOptions {
  std::vector<std::int64_t> sizes;  ///< all-reduce sizes in bytes
  int matrix = 64;                  ///< a compute chunk: one matrix x matrix float product (Eigen)
  int chunks = 50;                  ///< chunks timed alone per repetition
  int reps = 7;                     ///< repetitions per size; medians
};

/// Every rank runs it; each returns its own medians (rank 0's are written).
/// The pair is pooled over the sizes (formats::pooled_slowdowns; left 0
/// when no size ran a chunk beside its all-reduce: the caller checks).
/// std::invalid_argument on one rank (nothing to overlap), before any
/// collective.
formats::OverlapMeasurement measure_overlap(Transport& transport, const OverlapOptions& options);

}  // namespace ddpsim::real
