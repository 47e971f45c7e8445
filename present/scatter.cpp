// ddpsim advise's plot: every configuration as step time against peak
// memory per GPU (present/plot.hpp).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "present/plot.hpp"

namespace ddpsim::present {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};

}  // namespace

std::string memory_step_svg(const std::string& title, const std::vector<ScatterPoint>& points,
                            std::optional<double> limit_gib) {
  const double w = 720, h = 440, left = 70, right = 30, top = 50, bottom = 80;
  std::vector<std::string> series;
  double max_x = limit_gib.value_or(0), max_y = 0;
  for (const ScatterPoint& p : points) {
    if (std::find(series.begin(), series.end(), p.series) == series.end()) series.push_back(p.series);
    max_x = std::max(max_x, p.x);
    max_y = std::max(max_y, p.y);
  }
  const std::vector<double> xt = nice_ticks(0, max_x * 1.05), yt = nice_ticks(0, max_y * 1.05);
  const auto px = [&](double x) { return left + (w - left - right) * x / xt.back(); };
  const auto py = [&](double y) { return h - bottom - (h - top - bottom) * y / yt.back(); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{2}\" y=\"20\" font-size=\"14\">{3}</text>\n"
      "<line x1=\"{2}\" y1=\"{4}\" x2=\"{2}\" y2=\"{5}\" stroke=\"black\"/>\n"
      "<line x1=\"{2}\" y1=\"{5}\" x2=\"{6}\" y2=\"{5}\" stroke=\"black\"/>\n",
      w, h, left, title, top, h - bottom, w - right);
  for (double x : xt) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", px(x), h - bottom + 16, x);
  }
  for (double y : yt) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 4, py(y) + 4, y);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">peak memory per GPU (GiB)</text>\n"
                     "<text x=\"{}\" y=\"{}\">step time (ms)</text>\n",
                     (left + w - right) / 2, h - bottom + 34, left + 4, top - 8);
  if (limit_gib) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#d62728\" "
                       "stroke-dasharray=\"6 4\"/>\n<text x=\"{3:.1f}\" y=\"{4}\" fill=\"#d62728\">device memory "
                       "{5:g} GiB</text>\n",
                       px(*limit_gib), top, h - bottom, px(*limit_gib) - 4, top + 12, *limit_gib);
  }
  const ScatterPoint* chosen = nullptr;
  for (const ScatterPoint& p : points) {
    const std::size_t k = static_cast<std::size_t>(std::find(series.begin(), series.end(), p.series) - series.begin());
    const char* color = kColors[k % std::size(kColors)];
    const bool beyond = limit_gib && p.x > *limit_gib;
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" stroke=\"{}\"/>\n", px(p.x), py(p.y),
                       beyond ? "none" : color, color);
    if (p.chosen) chosen = &p;
  }
  std::vector<LegendEntry> legend;
  for (std::size_t k = 0; k < series.size(); ++k) legend.push_back({kColors[k % std::size(kColors)], "none", series[k], true});
  if (chosen) {
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n",
                       px(chosen->x), py(chosen->y));
    legend.push_back({"black", "none", "chosen (circled)", false});
  }
  svg += legend_svg(legend, left, h - 18);
  if (limit_gib) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\">hollow: does not fit in the device's memory</text>\n", left, h - 2);
  }
  return svg + "</svg>\n";
}

}  // namespace ddpsim::present
