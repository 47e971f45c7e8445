#include "present/plot.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the scaling plot draws the series it is given, and only those") {
  using ddpsim::present::PlotPoint;
  const std::vector<PlotPoint> predicted_only = {{1, {}, {}, 100.0, 100.0, {}, 1.0}, {8, {}, {}, 120.0, 125.0, {}, 100.0 / 120}};
  const std::string a = ddpsim::present::scaling_svg("t", predicted_only);
  CHECK(count(a, "<polyline") == 3);  // predicted and baseline step time, predicted efficiency
  CHECK(count(a, "<circle") == 0);
  CHECK(a.find("measured (mean") == std::string::npos);
  CHECK(a.find(">8</text>") != std::string::npos);  // the world-size axis reaches 8
  const std::vector<PlotPoint> measured = {{1, 101.0, 2.0, 100.0, 100.0, 1.0, 1.0}, {2, 110.0, 3.0, 108.0, 112.0, 101.0 / 110, 100.0 / 108}};
  const std::string b = ddpsim::present::scaling_svg("t", measured);
  CHECK(count(b, "<polyline") == 5);
  CHECK(count(b, "<circle") == 2);  // each measured mean, with its standard deviation
  CHECK(b.find(">measured (mean, ±1 sd)</text>") != std::string::npos);
}


TEST_CASE("axis ticks are round numbers: steps of 1, 2 or 5 times a power of ten") {
  using ddpsim::present::nice_ticks;
  CHECK(nice_ticks(0, 185) == std::vector<double>{0, 50, 100, 150, 200});
  CHECK(nice_ticks(0, 61.8) == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(nice_ticks(0, 1.2) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1, 1.2000000000000002});
  CHECK(nice_ticks(0, 0.0042).back() >= 0.0042);
  for (double hi : {0.37, 3.7, 37.0, 370.0, 3700.0, 12345.0}) {
    const std::vector<double> t = nice_ticks(0, hi);
    CAPTURE(hi);
    CHECK(t.front() == 0);
    CHECK(t.back() >= hi);
    CHECK(t.size() >= 3);
    CHECK(t.size() <= 8);
    const double step = t[1] - t[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    CHECK((std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 || std::fabs(mantissa - 5) < 1e-6));
  }
}

TEST_CASE("the scaling plot labels its axes with round numbers and has a legend of colour swatches") {
  using ddpsim::present::PlotPoint;
  const std::vector<PlotPoint> points = {{1, {}, {}, 100.0, 100.0, {}, 1.0}, {8, {}, {}, 176.0, 185.0, {}, 100.0 / 176}};
  const std::string s = ddpsim::present::scaling_svg("t", points);
  CHECK(s.find(">200</text>") != std::string::npos);  // 185 x 1.05 rounds up to the 200 tick
  CHECK(s.find(">194.") == std::string::npos);        // not a fraction of the maximum
  CHECK(s.find(">120%</text>") != std::string::npos);
  CHECK(count(s, "stroke=\"#1f77b4\" stroke-width=\"2\" stroke-dasharray=\"none\"/><text") == 1);  // the predicted swatch
  CHECK(s.find(">closed-form baseline</text>") != std::string::npos);
}

TEST_CASE("advise's plot: a dot per configuration, the memory limit, the chosen one circled, beyond the limit hollow") {
  using ddpsim::present::ScatterPoint;
  const std::vector<ScatterPoint> points = {
      {10.3, 59.0, "DDP", false}, {8.5, 45.5, "HYBRID_SHARD", true}, {90.0, 40.0, "DDP", false}};
  const std::string s = ddpsim::present::memory_step_svg("t", points, 80.0);
  CHECK(count(s, "r=\"3.5\"") == 3);
  CHECK(count(s, "r=\"3.5\" fill=\"none\"") == 1);  // 90 GiB on an 80 GiB device
  CHECK(count(s, "r=\"9\"") == 1);                  // the chosen one
  CHECK(s.find("device memory 80 GiB") != std::string::npos);
  CHECK(s.find(">HYBRID_SHARD</text>") != std::string::npos);  // a legend entry per program
  CHECK(s.find(">100</text>") != std::string::npos);           // the memory axis reaches 100 GiB in round steps
}
