#pragma once
// The sections of the sweep's HTML page after the scaling curve and the
// breakdown (report/html_report.cpp), each from the sweep's JSON document
// (report/sweep_report.hpp's to_json; docs/scenario-format.md#json-result).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/html_page.hpp"

namespace ddpsim::report {

/// A number of the document with `digits` decimals, "-" for null.
std::string num(const nlohmann::ordered_json& v, int digits = 1);
/// "W=8", or "W=8 cap=25" in a bucket sweep.
std::string row_label(const nlohmann::ordered_json& run, bool bucket_sweep);

/// One iteration per rank, compute and communication streams, from the sweep's Chrome trace.
void timeline_section(HtmlPage& page, const nlohmann::ordered_json& runs, const std::optional<std::string>& trace);
/// Memory per rank by kind against the device (the last row).
void memory_section(HtmlPage& page, const nlohmann::ordered_json& runs);
/// Each run that hung or crashed: the reason and fix, who waited for whom, the first misaligned pair.
void failure_section(HtmlPage& page, const nlohmann::ordered_json& runs);
/// The SimGrid engine's busiest links (the last row that has them).
void links_section(HtmlPage& page, const nlohmann::ordered_json& runs, bool bucket_sweep);

}  // namespace ddpsim::report
