#pragma once
// One self-contained HTML page: sections of headings, tables and Vega-Lite
// charts, with the chart libraries (vega, vega-lite, vega-embed as one script
// from vl-convert-python, pinned in python/requirements.txt, written by the
// build with scripts/fetch_charts.py) inlined, so the
// page opens without a network. Without the libraries it keeps its tables
// and says why its charts are missing.
//
// The page records how it rendered on <body>: data-charts-expected (charts
// it holds), data-charts-rendered (charts vega-embed drew), data-done (set
// when every chart has finished or failed) and, in <pre id="errors">, any
// script error or console.error (tests/html_report_test.sh reads them in a
// real browser).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ddpsim::report {

/// The chart libraries' text (one script: vega, vega-lite, vega-embed), or why it is absent.
struct ChartAssets {
  std::string bundle;
  std::string missing;  ///< empty when the bundle is here
  bool ok() const { return missing.empty(); }
};

/// The folder the chart libraries are read from: $DDPSIM_VEGA_DIR when set
/// (only there), else share/ddpsim/vega beside the binary's prefix (an
/// install, or the build tree's copy), else the build tree's.
std::string chart_assets_dir();
/// Reads vega-bundle.js (scripts/fetch_charts.py writes it) from chart_assets_dir().
ChartAssets load_chart_assets();

/// Text for HTML: & < > " ' escaped.
std::string html_escape(const std::string& text);

class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}
  /// A section heading; what follows until the next belongs to it.
  void heading(const std::string& text, const std::string& id = "");
  /// A paragraph of text (escaped).
  void paragraph(const std::string& text);
  /// A table of text cells (escaped); `caption` above it when given.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::string& caption = "");
  /// A Vega-Lite chart: its spec (data inline) drawn as SVG in a div of its own.
  void chart(const std::string& id, nlohmann::ordered_json spec);
  /// The whole page; charts drawn with `assets` when it holds the libraries.
  std::string render(const ChartAssets& assets) const;

 private:
  std::string title_;
  std::string body_;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> specs_;
};

}  // namespace ddpsim::report
