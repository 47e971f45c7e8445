#include "present/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ddpsim::present {

std::vector<double> nice_ticks(double lo, double hi, int target) {
  lo = std::min(lo, 0.0);
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * power;
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw * (1 - 1e-9)) {
      step = m * power;
      break;
    }
  }
  std::vector<double> out;
  const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
  for (long long i = first;; ++i) {
    const double v = static_cast<double>(i) * step;
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    if (v >= hi * (1 - 1e-12)) break;
  }
  return out;
}

std::string legend_svg(const std::vector<LegendEntry>& entries, double x, double y) {
  std::string svg;
  for (const LegendEntry& e : entries) {
    if (e.marker) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>", x + 9, y - 4, e.color);
    } else {
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                         "stroke-width=\"2\" stroke-dasharray=\"{}\"/>",
                         x, y - 4, x + 18, y - 4, e.color, e.dash);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 22, y, e.label);
    x += 34 + 6.5 * static_cast<double>(e.label.size());
  }
  return svg;
}

std::string scaling_svg(const std::string& title, const std::vector<PlotPoint>& points) {
  // Two panels: step time, then efficiency, against log2 W.
  const double w = 720, h = 370, left = 60, right = 30, top = 56, bottom = 62, gap = 80;
  const double panel = (w - left - right - gap) / 2;
  int max_w = 1;
  double max_ms = 1e-9;
  bool measured = false;
  for (const PlotPoint& p : points) {
    max_w = std::max(max_w, p.world_size);
    for (const auto& v : {p.predicted_ms, p.baseline_ms}) {
      if (v) max_ms = std::max(max_ms, *v);
    }
    if (p.measured_ms) {
      measured = true;
      max_ms = std::max(max_ms, *p.measured_ms + p.measured_sd_ms.value_or(0));
    }
  }
  const double levels = std::max(1.0, std::log2(static_cast<double>(max_w)));
  const auto x_of = [&](int world, double x0) { return x0 + panel * std::log2(static_cast<double>(world)) / levels; };
  const std::vector<double> ms_ticks = nice_ticks(0, max_ms * 1.05), eff_ticks = nice_ticks(0, 1.2);
  const double ms_top = ms_ticks.back(), eff_top = eff_ticks.back();
  const auto y_ms = [&](double ms) { return top + (h - top - bottom) * (1 - ms / ms_top); };
  const auto y_eff = [&](double e) { return top + (h - top - bottom) * (1 - e / eff_top); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n",
      w, h, left, title);
  const double x2 = left + panel + gap;
  for (double x0 : {left, x2}) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n"
                       "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
                       x0, top, h - bottom, x0 + panel);
    for (int world = 1; world <= max_w; world *= 2) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(world, x0), h - bottom + 16, world);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">world size</text>\n", x0 + panel / 2, h - bottom + 32);
  }
  for (double ms : ms_ticks) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 4, y_ms(ms) + 4, ms);
  }
  for (double eff : eff_ticks) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}%</text>\n", x2 - 4, y_eff(eff) + 4,
                       std::round(100 * eff));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\">step time (ms)</text>\n<text x=\"{}\" y=\"{}\">scaling efficiency</text>\n",
                     left + 4, top - 6, x2 + 4, top - 6);
  using Field = std::optional<double> PlotPoint::*;
  const auto polyline = [&](Field field, const char* color, const char* dash, double x0, auto y) {
    std::string pts;
    for (const PlotPoint& p : points) {
      if (p.*field) pts += fmt::format("{:.1f},{:.1f} ", x_of(p.world_size, x0), y(*(p.*field)));
    }
    if (pts.empty()) return std::string();
    return fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\"/>\n",
                       pts, color, dash);
  };
  svg += polyline(&PlotPoint::measured_ms, "black", "none", left, y_ms);
  svg += polyline(&PlotPoint::predicted_ms, "#1f77b4", "none", left, y_ms);
  svg += polyline(&PlotPoint::baseline_ms, "#ff7f0e", "6 4", left, y_ms);
  for (const PlotPoint& p : points) {  // measured: mean and one standard deviation
    if (!p.measured_ms) continue;
    const double x = x_of(p.world_size, left), sd = p.measured_sd_ms.value_or(0);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>"
                       "<circle cx=\"{0:.1f}\" cy=\"{3:.1f}\" r=\"3\"/>\n",
                       x, y_ms(*p.measured_ms - sd), y_ms(*p.measured_ms + sd), y_ms(*p.measured_ms));
  }
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"gray\" stroke-dasharray=\"2 3\"/>\n", x2,
                     y_eff(1), x2 + panel, y_eff(1));
  svg += polyline(&PlotPoint::measured_efficiency, "black", "none", x2, y_eff);
  svg += polyline(&PlotPoint::predicted_efficiency, "#1f77b4", "none", x2, y_eff);
  std::vector<LegendEntry> legend;
  if (measured) legend.push_back({"black", "none", "measured (mean, ±1 sd)"});
  legend.push_back({"#1f77b4", "none", "predicted"});
  legend.push_back({"#ff7f0e", "6 4", "closed-form baseline"});
  legend.push_back({"gray", "2 3", "ideal"});
  svg += legend_svg(legend, left, h - 8);
  return svg + "</svg>\n";
}

}  // namespace ddpsim::present
