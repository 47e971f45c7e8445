#pragma once
// ddpsim's plots, as SVG text.

#include <optional>
#include <string>
#include <vector>

namespace ddpsim::present {

/// One world size of a plot; absent series are not drawn.
struct PlotPoint {
  int world_size = 1;
  std::optional<double> measured_ms, measured_sd_ms, predicted_ms, baseline_ms;
  std::optional<double> measured_efficiency, predicted_efficiency;
};
/// Step time (measured, predicted, baseline) and scaling efficiency against
/// world size (log2 axis), with the ideal line. Hand-written SVG: no plotting
/// library is packaged for C++ in Debian 12.
std::string scaling_svg(const std::string& title, const std::vector<PlotPoint>& points);
}  // namespace ddpsim::present
