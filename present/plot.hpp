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

/// Round-number axis ticks from 0 (or below `lo`) to at least `hi`: steps of
/// 1, 2 or 5 times a power of ten, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

/// A legend entry: a swatch (a line in `color` with `dash`, or a dot) and its label.
struct LegendEntry {
  std::string color;
  std::string dash = "none";
  std::string label;
  bool marker = false;
};
/// The entries side by side from (x, y), the text's baseline.
std::string legend_svg(const std::vector<LegendEntry>& entries, double x, double y);

/// One configuration of ddpsim advise's plot.
struct ScatterPoint {
  double x = 0;         ///< peak memory per GPU, GiB
  double y = 0;         ///< step time, ms
  std::string series;   ///< its program: each gets a colour and a legend entry
  bool chosen = false;  ///< marked, and named in the legend
};
/// Step time against peak memory per GPU, a colour per series, the device's
/// memory (if any) as a vertical line; points beyond it hollow.
std::string memory_step_svg(const std::string& title, const std::vector<ScatterPoint>& points,
                            std::optional<double> limit_gib);
}  // namespace ddpsim::present
