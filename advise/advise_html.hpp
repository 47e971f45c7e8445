#pragma once
// ddpsim advise --html: the recommendation and its reasons, every
// configuration's objective against its peak memory per GPU (a Vega-Lite
// scatter, the device's memory as a line), and the ranking as a table, on
// one self-contained page (report/html_page.hpp).

#include <string>

#include "advise/advisor.hpp"
#include "report/html_page.hpp"

namespace ddpsim::advisor {

std::string to_html(const Advice& advice, const report::ChartAssets& assets);

}  // namespace ddpsim::advisor
