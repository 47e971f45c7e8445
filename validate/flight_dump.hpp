#pragma once
// ddpsim run --flight-recorder: what each rank's NCCL flight recorder would
// hold when the watchdog fires, from a simulated run that hung or crashed
// (formats/flight_recorder.hpp; docs/flight-recorder.md).

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "formats/flight_recorder.hpp"
#include "models/collective_library.hpp"
#include "models/run_result.hpp"
#include "sim/engine.hpp"

namespace ddpsim::validate {

/// Every rank's completed collectives, the last `buffer` of each
/// (TORCH_NCCL_TRACE_BUFFER_SIZE), as the engine reports them.
class CollectiveRecorder final : public sim::Observer {
 public:
  CollectiveRecorder(int world_size, std::size_t buffer);
  void on_op(const sim::OpRecord& record) override;
  const std::deque<sim::OpRecord>& rank(int r) const { return ranks_.at(static_cast<std::size_t>(r)); }
  int world_size() const { return static_cast<int>(ranks_.size()); }

 private:
  std::size_t buffer_;
  std::vector<std::deque<sim::OpRecord>> ranks_;
};

/// Each rank's dump as its watchdog would leave it: the completed
/// collectives the recorder kept, then the one it waits in ("started": its
/// kernel runs, as with TORCH_NCCL_ENABLE_TIMING=1) and any it had queued
/// ("scheduled"). Ranks that were killed leave none. Times are simulated
/// nanoseconds from the run's start; sizes are fp32 elements of the bytes.
std::vector<formats::FlightRecord> flight_records(const CollectiveRecorder& recorder, const models::RunResult& run,
                                                  models::Backend backend, sim::Time watchdog_timeout);

/// Writes each (name, text) into `dir`, creating it (--flight-recorder's errors, exit 2).
void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace ddpsim::validate
