#pragma once
// The overlap measurement (format "ddpsim-overlap-1"): compute and an
// all-reduce alone and at once on W ranks, and the contention pair they give
// (docs/cost-models.md#measuring-both-the-overlap-micro-benchmark). Written by
// `python3 -m ddpsim_torch overlap` (gloo) and `ddpsim-real overlap` (MPI);
// read by `ddpsim calibrate --overlap`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::formats {

/// One all-reduce size: the medians of its repetitions on rank 0.
struct OverlapSize {
  std::int64_t bytes = 0;
  double chunk_ms = 0;       ///< one compute chunk, alone
  double allreduce_ms = 0;   ///< the all-reduce, alone
  double both_ms = 0;        ///< the all-reduce started, chunks computed until it completed
  double chunks_beside = 0;  ///< the chunks that loop ran
};

struct OverlapMeasurement {
  std::string file;
  std::string backend;  ///< "gloo", "mpi"
  std::string device;   ///< "cpu"
  int world_size = 0;
  int threads = 0;
  std::vector<OverlapSize> sizes;
  double compute_slowdown = 0;  ///< contention.compute_slowdown, the sizes pooled
  double comm_slowdown = 0;     ///< contention.comm_slowdown, the sizes pooled
};

/// The pair, pooling the sizes as one step that runs each once:
/// c = sum(both) / sum(allreduce) - 1, s = sum(both) / sum(chunks x chunk) - 1
/// over the sizes with a chunk beside them (each clamped at 0). Nothing when
/// no size ran a chunk beside its all-reduce (python/ddpsim_torch/overlap.py
/// computes the same).
struct Slowdowns {
  double compute = 0;
  double comm = 0;
};
std::optional<Slowdowns> pooled_slowdowns(const std::vector<OverlapSize>& sizes);

/// FormatError (formats/measured_run.hpp) naming the file and the key if it
/// is unreadable, not JSON, not an overlap measurement, or a figure is
/// missing, not a number, or outside the scenario's bounds (compute 0..1000,
/// communication 0..1e6).
OverlapMeasurement read_overlap(const std::string& path);

/// The measurement as JSON (the pair as in `m`; the file name left out).
std::string to_json(const OverlapMeasurement& m, const std::string& host);

}  // namespace ddpsim::formats
