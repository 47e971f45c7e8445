#pragma once
// The overlap measurement `python3 -m ddpsim_torch overlap` writes (format
// "ddpsim-overlap-1"): compute and an all-reduce alone and at once on W
// ranks, and the contention pair they give (docs/cost-models.md#compute-slowed-by-communication).

#include <string>

namespace ddpsim::formats {

struct OverlapMeasurement {
  std::string file;
  std::string backend;  ///< "gloo"
  std::string device;   ///< "cpu"
  int world_size = 0;
  int threads = 0;
  int sizes = 0;                ///< all-reduce sizes measured
  double compute_slowdown = 0;  ///< contention.compute_slowdown, the sizes pooled (python/ddpsim_torch/overlap.py)
  double comm_slowdown = 0;     ///< contention.comm_slowdown, the sizes pooled
};

/// FormatError (formats/measured_run.hpp) naming the file and the key if it
/// is unreadable, not JSON, not an overlap measurement, or a figure is
/// missing, not a number, negative or past 1000 (the scenario's bound).
OverlapMeasurement read_overlap(const std::string& path);

}  // namespace ddpsim::formats
