#pragma once
// The renderings of a sweep: a table for people, CSV, JSON, and a plot.

#include <ostream>
#include <string>

#include "models/sampler.hpp"
#include "sweep/runner.hpp"

namespace ddpsim::report {

/// The scaling table, then who waits where for any run that hung.
void write_table(std::ostream& out, const scenarios::Scenario& scenario, const scenarios::SweepResult& result);
void write_csv(std::ostream& out, const scenarios::Scenario& scenario, const scenarios::SweepResult& result);
/// The initial and rebuilt bucket tables (`ddpsim buckets`).
void write_buckets(std::ostream& out, const scenarios::Scenario& scenario);
/// A DistributedSampler audit (`ddpsim sampler`); `show_ids` lists each rank's example IDs.
void write_sampler_audit(std::ostream& out, const models::SamplerAudit& audit, bool show_ids);
std::string buckets_to_json(const scenarios::Scenario& scenario);
std::string sampler_to_json(const models::SamplerAudit& audit);
/// The machine-readable result (format: docs/scenario-format.md#json-result).
std::string to_json(const scenarios::Scenario& scenario, const scenarios::SweepResult& result);

/// `ddpsim run --plot`: predicted and baseline step times and predicted
/// efficiency against W, first bucket cap, completed runs (present/plot.hpp).
std::string sweep_svg(const scenarios::Scenario& scenario, const scenarios::SweepResult& result);

}  // namespace ddpsim::report
