#pragma once
// ddpsim advise's outputs: the table and the recommendation as text, every
// configuration as JSON, and the SVG of step time against memory.

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "advise/advisor.hpp"

namespace ddpsim::advisor {

/// The search, the `top` best configurations, what does not fit, and the recommendation.
void write_text(std::ostream& out, const Advice& advice, int top);
/// Every configuration, ranked and dropped, and the recommendation.
nlohmann::ordered_json to_json(const Advice& advice);
/// Step time against peak memory per GPU, the device's memory as a line, the winner marked.
std::string to_svg(const Advice& advice);

}  // namespace ddpsim::advisor
