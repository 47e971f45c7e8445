#pragma once
// Why ddpsim advise's first configuration won: the quantity that decided
// each of its choices, against the configuration that differs from it in
// that choice alone (docs/advise.md#the-recommendation).

#include <string>
#include <vector>

#include "advise/advisor.hpp"

namespace ddpsim::advisor {

/// The reasons, most decisive first; for an empty ranking, why nothing fits.
std::vector<std::string> reasons(const Advice& advice);

/// The objective's value with its unit: "1,234.5 samples/s", "102.3 ms".
std::string format_objective(Objective o, double value);

}  // namespace ddpsim::advisor
