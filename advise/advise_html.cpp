#include "advise/advise_html.hpp"

#include <fmt/format.h>

#include "advise/advise_report.hpp"

namespace ddpsim::advisor {
namespace {

using nlohmann::ordered_json;

std::string cell(const ordered_json& v, int digits) {
  return v.is_number() ? fmt::format("{:.{}f}", v.get<double>(), digits) : std::string("-");
}

// Every configuration as a point: its objective against its peak memory per GPU; the winner marked.
ordered_json scatter(const ordered_json& doc) {
  ordered_json points = ordered_json::array();
  const std::string best = doc["recommendation"]["configuration"].is_string()
                               ? doc["recommendation"]["configuration"].get<std::string>()
                               : std::string();
  for (const char* list : {"ranked", "dropped"}) {
    for (const ordered_json& c : doc[list]) {
      if (!c["peak_memory_bytes"].is_number() || !c["objective"].is_number()) continue;
      const std::string name = c["configuration"].get<std::string>();
      points.push_back({{"configuration", name}, {"program", c["program"]}, {"GiB", c["peak_memory_bytes"].get<double>() / (1 << 30)},
                        {"objective", c["objective"]}, {"step_ms", c["step_ms"]},
                        {"status", name == best ? "recommended" : std::string(list) == "ranked" ? "fits" : "does not fit"}});
    }
  }
  ordered_json layers = ordered_json::array(
      {{{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
        {"encoding",
         {{"x", {{"field", "GiB"}, {"type", "quantitative"}, {"title", "peak memory per GPU (GiB)"}}},
          {"y", {{"field", "objective"}, {"type", "quantitative"}, {"scale", {{"zero", false}}},
                 {"title", doc["objective"].get<std::string>()}}},
          {"color", {{"field", "program"}, {"type", "nominal"}}},
          {"shape", {{"field", "status"}, {"type", "nominal"}, {"title", nullptr}}},
          {"tooltip", ordered_json::array({{{"field", "configuration"}}, {{"field", "objective"}}, {{"field", "GiB"}},
                                           {{"field", "step_ms"}}})}}}}});
  if (doc["device_memory_bytes"].is_number()) {
    layers.push_back({{"data", {{"values", ordered_json::array({{{"GiB", doc["device_memory_bytes"].get<double>() / (1 << 30)}}})}}},
                      {"mark", {{"type", "rule"}, {"color", "#c00"}, {"strokeWidth", 2}}},
                      {"encoding", {{"x", {{"field", "GiB"}, {"type", "quantitative"}}}}}});
  }
  return {{"width", 640}, {"height", 360}, {"data", {{"values", points}}}, {"layer", layers}};
}

}  // namespace

std::string to_html(const Advice& advice, const report::ChartAssets& assets) {
  const ordered_json doc = to_json(advice);
  report::HtmlPage page("ddpsim advise: " + advice.scenario);
  page.paragraph(fmt::format("objective {} ({}); {} configurations fit and completed, {} do not fit.",
                             doc["objective"].get<std::string>(), doc["higher_is_better"].get<bool>() ? "higher is better" : "lower is better",
                             advice.ranked.size(), advice.dropped.size()));
  for (const std::string& line : advice.axes) page.paragraph("searched: " + line);
  page.heading("The recommendation", "recommendation");
  if (doc["recommendation"]["configuration"].is_string()) {
    page.paragraph(doc["recommendation"]["configuration"].get<std::string>());
    for (const ordered_json& r : doc["recommendation"]["reasons"]) page.paragraph("- " + r.get<std::string>());
  } else {
    page.paragraph("None: no configuration fits and completes.");
  }
  page.heading("Every configuration: the objective against memory per GPU", "scatter");
  page.chart("chart-advise", scatter(doc));
  std::vector<std::vector<std::string>> rows;
  int rank = 0;
  for (const ordered_json& c : doc["ranked"]) {
    rows.push_back({std::to_string(++rank), c["configuration"].get<std::string>(), cell(c["step_ms"], 1),
                    cell(c["samples_per_s"], 1), cell(ordered_json(c["peak_memory_bytes"].get<double>() / (1 << 30)), 2),
                    cell(c["exposed_comm_ms"], 1), cell(ordered_json(c["efficiency"].get<double>() * 100), 1) + "%",
                    cell(c["objective"], 1)});
  }
  page.heading("The ranking", "ranking");
  page.table({"rank", "configuration", "step (ms)", "samples/s", "peak (GiB)", "exposed comm (ms)", "efficiency", "objective"}, rows);
  std::vector<std::vector<std::string>> dropped;
  for (const ordered_json& c : doc["dropped"]) {
    dropped.push_back({c["configuration"].get<std::string>(), cell(ordered_json(c["peak_memory_bytes"].get<double>() / (1 << 30)), 2),
                       c["outcome"].get<std::string>()});
  }
  if (!dropped.empty()) page.table({"configuration", "peak (GiB)", "outcome"}, dropped, "Do not fit or did not complete");
  return page.render(assets);
}

}  // namespace ddpsim::advisor
