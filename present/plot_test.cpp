#include "present/plot.hpp"

#include <doctest/doctest.h>

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
  CHECK(a.find("black: measured") == std::string::npos);
  CHECK(a.find(">8</text>") != std::string::npos);  // the world-size axis reaches 8
  const std::vector<PlotPoint> measured = {{1, 101.0, 2.0, 100.0, 100.0, 1.0, 1.0}, {2, 110.0, 3.0, 108.0, 112.0, 101.0 / 110, 100.0 / 108}};
  const std::string b = ddpsim::present::scaling_svg("t", measured);
  CHECK(count(b, "<polyline") == 5);
  CHECK(count(b, "<circle") == 2);  // each measured mean, with its standard deviation
  CHECK(b.find("black: measured (mean, ±1 sd)") != std::string::npos);
}

