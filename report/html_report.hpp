#pragma once
// `ddpsim report S.yaml --html OUT.html` and `ddpsim run ... --html`: a
// sweep as one self-contained page (report/html_page.hpp): the scaling curve
// against the closed form, the step broken into compute, exposed
// communication and waiting, one iteration's timeline per rank, memory per
// rank by kind against the device, a hang or crash (who waited for whom, the
// first misaligned collective, the fix) and, from the SimGrid engine, the
// busiest links. Every chart has its table beside it.

#include <optional>
#include <string>

#include "report/html_page.hpp"
#include "sweep/runner.hpp"

namespace ddpsim::report {

/// Ranks of one run the timeline shows (the trace the page reads holds at least these).
inline constexpr int kTimelineRanks = 8;
/// The largest world size whose sweep the report traces for its timeline:
/// tracing simulates every rank (no fast path).
inline constexpr int kTimelineMaxWorld = 1024;

/// The page for `result`. `trace` is the sweep's Chrome trace (sim/chrome_trace.hpp)
/// when it was traced: the timeline shows the first multi-rank row's first measured iteration.
std::string sweep_html(const scenarios::Scenario& scenario, const scenarios::SweepResult& result,
                       const std::optional<std::string>& trace, const ChartAssets& assets);

}  // namespace ddpsim::report
