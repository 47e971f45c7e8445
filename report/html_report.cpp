#include "report/html_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "report/html_sections.hpp"
#include "report/sweep_report.hpp"

namespace ddpsim::report {
namespace {

using nlohmann::ordered_json;

void scaling(HtmlPage& page, const ordered_json& runs, bool bucket_sweep) {
  page.heading("Scaling: simulated step time against the closed form", "scaling");
  ordered_json values = ordered_json::array();
  std::vector<std::vector<std::string>> rows;
  std::vector<int> sizes;  // the axis' ticks: the world sizes simulated
  for (const ordered_json& r : runs) {
    if (std::find(sizes.begin(), sizes.end(), r["world_size"].get<int>()) == sizes.end()) sizes.push_back(r["world_size"]);
    const std::string cap = fmt::format("{:g} MB", r["bucket_cap_mb"].get<double>());
    const std::string sim = bucket_sweep ? "simulated, cap " + cap : std::string("simulated");
    const std::string closed = bucket_sweep ? "closed form, cap " + cap : std::string("closed form");
    if (r["step_ms"].is_number()) values.push_back({{"W", r["world_size"]}, {"step_ms", r["step_ms"]}, {"series", sim}});
    values.push_back({{"W", r["world_size"]}, {"step_ms", r["closed_form_step_ms"]}, {"series", closed}});
    rows.push_back({std::to_string(r["world_size"].get<int>()), cap, num(r["step_ms"], 3), num(r["closed_form_step_ms"], 3),
                    r["speedup"].is_number() ? num(r["speedup"]) + "x" : "-",
                    r["efficiency"].is_number() ? fmt::format("{:.1f}%", r["efficiency"].get<double>() * 100) : "-",
                    r["outcome"].get<std::string>()});
  }
  page.chart("chart-scaling",
             {{"width", 640}, {"height", 300}, {"data", {{"values", values}}},
              {"mark", {{"type", "line"}, {"point", true}}},
              {"encoding",
               {{"x", {{"field", "W"}, {"type", "quantitative"}, {"scale", {{"type", "log"}, {"base", 2}}},
                       {"axis", {{"values", sizes}, {"format", "d"}}}, {"title", "world size W"}}},
                {"y", {{"field", "step_ms"}, {"type", "quantitative"}, {"title", "step time (ms)"}}},
                {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}},
                {"tooltip", ordered_json::array({{{"field", "W"}}, {{"field", "series"}}, {{"field", "step_ms"}}})}}}});
  page.table({"W", "bucket cap", "step (ms)", "closed form (ms)", "speedup", "efficiency", "outcome"}, rows);
}

void breakdown(HtmlPage& page, const ordered_json& runs, bool bucket_sweep) {
  page.heading("Where the step goes (mean over ranks)", "breakdown");
  ordered_json values = ordered_json::array();
  std::vector<std::vector<std::string>> rows;
  for (const ordered_json& r : runs) {
    if (r["ranks"].empty() || !r["step_ms"].is_number()) continue;
    double compute = 0, exposed = 0, wait = 0, data = 0;
    for (const ordered_json& k : r["ranks"]) {
      compute += k["compute_ms"].get<double>(), exposed += k["exposed_comm_ms"].get<double>();
      wait += k["wait_ms"].get<double>(), data += k["data_ms"].get<double>();
    }
    const double n = static_cast<double>(r["ranks"].size());
    const std::string label = row_label(r, bucket_sweep);
    const std::pair<const char*, double> parts[] = {
        {"compute", compute / n}, {"exposed communication", exposed / n}, {"waiting for other ranks", wait / n}, {"data", data / n}};
    for (const auto& [part, ms] : parts) values.push_back({{"row", label}, {"part", part}, {"ms", ms}});
    rows.push_back({label, fmt::format("{:.3f}", compute / n), fmt::format("{:.3f}", exposed / n), fmt::format("{:.3f}", wait / n),
                    fmt::format("{:.3f}", data / n), num(r["step_ms"], 3)});
  }
  if (rows.empty()) {
    page.paragraph("No run completed a measured step.");
    return;
  }
  page.chart("chart-breakdown",
             {{"width", 640}, {"height", {{"step", 22}}}, {"data", {{"values", values}}}, {"mark", "bar"},
              {"encoding",
               {{"y", {{"field", "row"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                {"x", {{"field", "ms"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "ms per step"}}},
                {"color", {{"field", "part"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                {"tooltip", ordered_json::array({{{"field", "row"}}, {{"field", "part"}}, {{"field", "ms"}}})}}}});
  page.table({"run", "compute (ms)", "exposed comm (ms)", "waiting (ms)", "data (ms)", "step (ms)"}, rows);
}

}  // namespace

std::string sweep_html(const scenarios::Scenario& scenario, const scenarios::SweepResult& result,
                       const std::optional<std::string>& trace, const ChartAssets& assets) {
  const ordered_json doc = ordered_json::parse(to_json(scenario, result));
  const ordered_json& runs = doc["runs"];
  HtmlPage page("ddpsim: " + scenario.name);
  page.paragraph(fmt::format("{} engine, seed {}; ddpsim {} ({}). {}", result.engine, scenario.seed,
                             doc["provenance"]["ddpsim_version"].get<std::string>(),
                             doc["provenance"]["git_commit"].get<std::string>(), scenario.model_description));
  scaling(page, runs, result.bucket_sweep);
  breakdown(page, runs, result.bucket_sweep);
  timeline_section(page, runs, trace);
  memory_section(page, runs);
  failure_section(page, runs);
  links_section(page, runs, result.bucket_sweep);
  return page.render(assets);
}

}  // namespace ddpsim::report
