#include "present/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ddpsim::present {

std::string scaling_svg(const std::string& title, const std::vector<PlotPoint>& points) {
  // Two panels: step time, then efficiency, against log2 W.
  const double w = 720, h = 340, left = 60, right = 30, top = 56, bottom = 50, gap = 80;
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
  const auto y_ms = [&](double ms) { return top + (h - top - bottom) * (1 - ms / (max_ms * 1.1)); };
  const auto y_eff = [&](double e) { return top + (h - top - bottom) * (1 - e / 1.2); };
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
  for (int i = 0; i <= 4; ++i) {
    const double ms = max_ms * 1.1 * i / 4, eff = 1.2 * i / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.3g}</text>\n", left - 4, y_ms(ms) + 4, ms);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.0f}%</text>\n", x2 - 4, y_eff(eff) + 4, 100 * eff);
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
  svg += fmt::format("<text x=\"{}\" y=\"{}\">{}blue: predicted   orange dashed: closed-form baseline   gray: ideal</text>\n</svg>\n",
                     left, h - 6, measured ? "black: measured (mean, ±1 sd)   " : "");
  return svg;
}

}  // namespace ddpsim::present
