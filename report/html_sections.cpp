#include "report/html_sections.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "report/html_report.hpp"

namespace ddpsim::report {
namespace {

using nlohmann::ordered_json;

std::string join(const ordered_json& ints) {
  std::string out;
  for (const ordered_json& v : ints) out += (out.empty() ? "" : ", ") + v.dump();
  return out.empty() ? "-" : out;
}

std::string text_of(const ordered_json& v) {
  if (v.is_null()) return "-";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A communication bar's label: "b3" for DDP's bucket 3, "u3" for FSDP's unit 3, else none.
std::string short_label(const std::string& op) {
  for (const auto& [word, letter] : {std::pair<std::string_view, char>{"bucket ", 'b'}, {"unit ", 'u'}}) {
    const auto at = op.find(word);
    if (at == std::string::npos) continue;
    const auto from = at + word.size();
    return letter + op.substr(from, op.find(' ', from) - from);
  }
  return "";
}

// The Chrome trace's runs: pid -> (run name, rank), from its process_name records.
std::map<int, std::pair<std::string, int>> trace_processes(const ordered_json& events) {
  std::map<int, std::pair<std::string, int>> out;
  for (const ordered_json& e : events) {
    if (e.value("ph", "") != "M" || e.value("name", "") != "process_name") continue;
    const std::string name = e["args"]["name"].get<std::string>();
    const auto at = name.rfind(" rank ");
    if (at == std::string::npos) continue;
    out[e["pid"].get<int>()] = {name.substr(0, at), std::stoi(name.substr(at + 6))};
  }
  return out;
}

// The first run of the trace with more than one rank, and its ranks' pids.
std::pair<std::string, std::map<int, int>> first_multi_rank_run(const std::map<int, std::pair<std::string, int>>& procs) {
  std::map<std::string, std::map<int, int>> by_run;  // run -> pid -> rank
  std::vector<std::string> order;
  for (const auto& [pid, pr] : procs) {
    if (by_run.find(pr.first) == by_run.end()) order.push_back(pr.first);
    by_run[pr.first][pid] = pr.second;
  }
  for (const std::string& run : order) {
    if (by_run[run].size() > 1) return {run, by_run[run]};
  }
  return {};
}

}  // namespace

std::string num(const ordered_json& v, int digits) {
  return v.is_number() ? fmt::format("{:.{}f}", v.get<double>(), digits) : std::string("-");
}

std::string row_label(const ordered_json& run, bool bucket_sweep) {
  const std::string w = fmt::format("W={}", run["world_size"].get<int>());
  return bucket_sweep ? fmt::format("{} cap={:g}", w, run["bucket_cap_mb"].get<double>()) : w;
}

void timeline_section(HtmlPage& page, const ordered_json& runs, const std::optional<std::string>& trace) {
  page.heading("One iteration, rank by rank", "timeline");
  if (!trace) {
    page.paragraph(fmt::format("Not traced: the report traces sweeps of at most {} ranks (tracing simulates every "
                               "rank); ddpsim run --trace writes the whole Chrome trace.",
                               kTimelineMaxWorld));
    return;
  }
  const ordered_json doc = ordered_json::parse(*trace);
  const ordered_json& events = doc["traceEvents"];
  const auto [run, ranks] = first_multi_rank_run(trace_processes(events));
  int warmup = 0;
  if (!runs.empty()) warmup = runs.front().value("warmup_iterations", 0);
  int last = -1;
  for (const ordered_json& e : events) {
    if (e.value("ph", "") == "X" && ranks.count(e["pid"].get<int>()) > 0) last = std::max(last, e["args"]["iteration"].get<int>());
  }
  if (ranks.empty() || last < 0) {
    page.paragraph("No run of more than one rank to show.");
    return;
  }
  const int iteration = std::min(warmup, last);
  struct Span {
    std::string lane, name, kind, label;
    double start_us, end_us;
  };
  std::vector<Span> spans;
  double t0 = -1;
  for (const ordered_json& e : events) {
    if (e.value("ph", "") != "X" || e["args"]["iteration"].get<int>() != iteration) continue;
    const auto it = ranks.find(e["pid"].get<int>());
    const std::string cat = e.value("cat", "");
    if (it == ranks.end() || it->second >= kTimelineRanks || (cat != "compute" && cat != "comm")) continue;
    std::string name = e["name"].get<std::string>();
    const std::string shown = name.substr(0, name.find(" ("));
    const std::string kind = shown.substr(0, shown.find(' '));
    const std::string label = cat == "comm" ? short_label(shown) : "";
    const double start = e["ts"].get<double>(), end = start + e["dur"].get<double>();
    t0 = t0 < 0 ? start : std::min(t0, start);
    spans.push_back({fmt::format("rank {} {}", it->second, cat), name, kind, label, start, end});
  }
  ordered_json values = ordered_json::array();
  bool labelled = false;
  for (const Span& s : spans) {
    labelled = labelled || !s.label.empty();
    values.push_back({{"lane", s.lane}, {"op", s.name}, {"kind", s.kind}, {"label", s.label},
                      {"start_ms", (s.start_us - t0) / 1e3}, {"end_ms", (s.end_us - t0) / 1e3}});
  }
  page.paragraph(fmt::format("{}, iteration {} (the first measured one), ranks 0 to {}; time from its first operation. "
                             "Communication bars are labelled with their bucket (b0 is the first launched) or FSDP unit (u0).",
                             run, iteration, std::min(static_cast<int>(ranks.size()), kTimelineRanks) - 1));
  const ordered_json enc_x = {{"field", "start_ms"}, {"type", "quantitative"}, {"title", "ms into the iteration"}};
  const ordered_json enc_y = {{"field", "lane"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}};
  ordered_json layers = ordered_json::array(
      {{{"mark", {{"type", "bar"}, {"stroke", "white"}, {"strokeWidth", 0.5}}},
        {"encoding", {{"x", enc_x}, {"x2", {{"field", "end_ms"}}},
                      {"color", {{"field", "kind"}, {"type", "nominal"}, {"title", nullptr}}},
                      {"tooltip", ordered_json::array({{{"field", "op"}}, {{"field", "start_ms"}}, {{"field", "end_ms"}}})}}}}});
  if (labelled) {  // an empty layer would warn of an infinite extent
    layers.push_back({{"transform", ordered_json::array({{{"filter", "datum.label != ''"}}})},
                      {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 2}, {"fontSize", 9}}},
                      {"encoding", {{"x", enc_x}, {"text", {{"field", "label"}}}}}});
  }
  page.chart("chart-timeline", {{"width", 900}, {"height", {{"step", 18}}}, {"data", {{"values", values}}},
                                {"encoding", {{"y", enc_y}}}, {"layer", layers}});
}

void memory_section(HtmlPage& page, const ordered_json& runs) {
  if (runs.empty() || runs.back()["memory"].empty()) return;
  const ordered_json& run = runs.back();
  page.heading(fmt::format("Memory per GPU at W={} (at the peak, by kind)", run["world_size"].get<int>()), "memory");
  if (run["memory"].front()["peak_bytes"].is_null()) return;
  ordered_json values = ordered_json::array();
  std::vector<std::vector<std::string>> rows;
  std::optional<double> device_gb;
  // GB, or MB for a small model (under 1 GB at the peak).
  const bool mb = run["memory"].front()["peak_bytes"].get<double>() < 1e9;
  const double unit = mb ? 1e6 : 1e9;
  const std::string unit_name = mb ? "MB" : "GB";
  for (const ordered_json& m : run["memory"]) {
    const int rank = m["rank"].get<int>();
    if (rank >= kTimelineRanks) break;
    if (m["device_bytes"].is_number()) device_gb = m["device_bytes"].get<double>() / unit;
    for (const auto& [key, v] : m.items()) {
      const std::string_view k = key;
      if (!v.is_number() || k == "rank" || k == "peak_bytes" || k == "device_bytes" || !k.ends_with("_bytes")) continue;
      std::string kind(k.substr(0, k.size() - 6));
      std::replace(kind.begin(), kind.end(), '_', ' ');
      values.push_back({{"rank", fmt::format("rank {}", rank)}, {"kind", kind}, {"size", v.get<double>() / unit}});
      if (rank == 0) rows.push_back({kind, fmt::format("{:.3f}", v.get<double>() / unit)});
    }
    if (rank == 0) {
      rows.push_back({"peak (" + text_of(m["peak_phase"]) + ")", fmt::format("{:.3f}", m["peak_bytes"].get<double>() / unit)});
      rows.push_back({"device", device_gb ? fmt::format("{:.3f}", *device_gb) : "not given (device.memory_GB)"});
    }
  }
  ordered_json layers = ordered_json::array(
      {{{"mark", "bar"},
        {"encoding", {{"y", {{"field", "rank"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                      {"x", {{"field", "size"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", unit_name + " per GPU"}}},
                      {"color", {{"field", "kind"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                      {"tooltip", ordered_json::array({{{"field", "rank"}}, {{"field", "kind"}}, {{"field", "size"}}})}}}}});
  if (device_gb) {
    layers.push_back({{"data", {{"values", ordered_json::array({{{"size", *device_gb}}})}}},
                      {"mark", {{"type", "rule"}, {"color", "#c00"}, {"strokeWidth", 2}}},
                      {"encoding", {{"x", {{"field", "size"}, {"type", "quantitative"}}}}}});
  }
  page.chart("chart-memory", {{"width", 640}, {"height", {{"step", 20}}}, {"data", {{"values", values}}}, {"layer", layers}});
  page.table({"rank 0 holds", unit_name}, rows, device_gb ? "the red line is the device's memory" : "");
}

void failure_section(HtmlPage& page, const ordered_json& runs) {
  bool any = false;
  for (const ordered_json& run : runs) {
    const ordered_json& f = run["failure"];
    if (f.is_null() && run["misalignments"].empty() && run["errors"].empty()) continue;
    if (!any) page.heading("Hangs and crashes", "failures");
    any = true;
    const std::string w = fmt::format("W={}", run["world_size"].get<int>());
    if (!f.is_null()) {
      page.paragraph(fmt::format("{}: {}. Waiting ranks: {}; missing ranks: {}; culprit: rank {}. {}", w,
                                 run["outcome"].get<std::string>(), join(f["waiting_ranks"]), join(f["missing_ranks"]),
                                 text_of(f["culprit_rank"]), f["reason"].get<std::string>()));
      page.paragraph("Fix: " + f["fix"].get<std::string>());
      std::vector<std::vector<std::string>> rows;
      for (const ordered_json& r : f["ranks"]) {
        rows.push_back({std::to_string(r["rank"].get<int>()), text_of(r["state"]), text_of(r.value("op", ordered_json())),
                        text_of(r.value("collective", ordered_json())), text_of(r.value("iteration", ordered_json())),
                        text_of(r.value("bucket", ordered_json())), text_of(r.value("detail", ordered_json()))});
      }
      page.table({"rank", "state", "op", "collective", "iteration", "bucket", "detail"}, rows,
                 fmt::format("{}: each rank at collective_seq_id {}", w, text_of(f["collective_seq_id"])));
    } else if (!run["errors"].empty()) {
      const ordered_json& e = run["errors"].front();
      page.paragraph(fmt::format("{}: crash at {:.1f} ms on rank {}: {}", w, e["at_ms"].get<double>(), e["rank"].get<int>(),
                                 e["message"].get<std::string>()));
    }
    std::vector<std::vector<std::string>> blocked;
    for (const ordered_json& b : run["blocked"]) {
      blocked.push_back({std::to_string(b["rank"].get<int>()), text_of(b["stream"]), text_of(b["op"]),
                         text_of(b.value("collective", ordered_json())), join(b.value("missing_ranks", ordered_json::array()))});
    }
    if (!blocked.empty()) page.table({"rank", "stream", "waits in", "collective", "waiting for ranks"}, blocked, w + ": who waited for whom");
    if (!run["misalignments"].empty()) {
      const ordered_json& m = run["misalignments"].front();
      page.table({"collective_seq_id", "rank", "op", "iteration", "paired with rank", "its op", "its iteration"},
                 {{text_of(m["collective_seq_id"]), text_of(m["rank"]), text_of(m["op"]), text_of(m["iteration"]), text_of(m["with_rank"]),
                   text_of(m["with_op"]), text_of(m["with_iteration"])}},
                 w + ": the first misaligned collective");
    }
  }
}

void links_section(HtmlPage& page, const ordered_json& runs, bool bucket_sweep) {
  const ordered_json* run = nullptr;
  for (const ordered_json& r : runs) {
    if (r.contains("links") && !r["links"].empty()) run = &r;
  }
  if (run == nullptr) return;
  std::vector<ordered_json> links((*run)["links"].begin(), (*run)["links"].end());
  std::stable_sort(links.begin(), links.end(), [](const ordered_json& a, const ordered_json& b) {
    return a["busy_share"].get<double>() > b["busy_share"].get<double>();
  });
  if (links.size() > 10) links.resize(10);
  page.heading(fmt::format("Busiest links at {} (SimGrid)", row_label(*run, bucket_sweep)), "links");
  ordered_json values = ordered_json::array();
  std::vector<std::vector<std::string>> rows;
  for (const ordered_json& l : links) {
    values.push_back({{"link", l["name"]}, {"busy_percent", l["busy_share"].get<double>() * 100}});
    rows.push_back({l["name"].get<std::string>(), num(l["capacity_GBps"]), fmt::format("{:.1f}", l["bytes_per_step"].get<double>() / 1e6),
                    fmt::format("{:.1f}%", l["busy_share"].get<double>() * 100)});
  }
  page.chart("chart-links",
             {{"width", 640}, {"height", {{"step", 18}}}, {"data", {{"values", values}}}, {"mark", "bar"},
              {"encoding", {{"y", {{"field", "link"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
                            {"x", {{"field", "busy_percent"}, {"type", "quantitative"}, {"scale", {{"domain", {0, 100}}}},
                                   {"title", "% of the run busy"}}}}}});
  page.table({"link", "capacity (GB/s)", "MB per step", "busy"}, rows);
}

}  // namespace ddpsim::report
