// ddpsim::run and the Sweep handle (include/ddpsim/ddpsim.hpp): the runner's
// result, and each rendering the command line writes, read from it.

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "api/api_data.hpp"
#include "netsim/simgrid_engine.hpp"
#include "report/html_page.hpp"
#include "report/html_report.hpp"
#include "report/rounding.hpp"
#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"
#include "loader/memory_plan.hpp"
#include "sweep/work_estimate.hpp"

namespace ddpsim {
namespace {

// The scenario as the run sees it: --engine and --world-size applied, as ddpsim run does.
scenarios::Scenario prepared(const Scenario& scenario, const RunOptions& o) {
  scenarios::Scenario s = scenario.data().scenario;
  if (!o.engine.empty()) {
    if (o.engine != "analytic" && o.engine != "simgrid") {
      throw scenarios::InputError({"options", 0, 0}, "engine", o.engine, "expected analytic or simgrid");
    }
    s.engine = o.engine;
  }
  if (!o.world_sizes.empty()) {
    for (const int w : o.world_sizes) {
      if (w < 1 || w > scenarios::kMaxWorldSize) {
        throw scenarios::InputError({"options", 0, 0}, "world_sizes", std::to_string(w),
                                    fmt::format("expected a world size from 1 to {}", scenarios::kMaxWorldSize));
      }
      scenarios::check_fits_cluster(s, w, "world_sizes");
    }
    s.sweep.world_sizes = o.world_sizes;
  }
  scenarios::check_budget(s, scenarios::estimate_work(s, 0, true), {o.max_rank_ops, o.max_memory_gb});
  scenarios::check_engine(s);
  if (s.engine == "simgrid" && !netsim::simgrid_available()) {
    throw scenarios::InputError({s.source, 0, 0}, "engine", "'simgrid'",
                                "expected an engine this ddpsim can run (" + netsim::simgrid_unavailable_reason() + ")");
  }
  return s;
}

// A row as the JSON's runs[] has it (the same rounding).
Run row_of(const scenarios::SweepRow& row, const scenarios::Scenario& s) {
  auto rounded = [](const std::optional<double>& v) {
    return v ? std::optional<double>(report::ratio6(*v)) : std::nullopt;
  };
  const models::RunResult& r = row.run;
  Run out;
  out.world_size = r.world_size;
  out.bucket_cap_mb = row.bucket_cap_mb;
  out.outcome = std::string(models::to_string(r.outcome));
  out.step_ms = rounded(r.step_ms);
  out.baseline_step_ms = rounded(row.baseline_ms);
  out.speedup = rounded(row.speedup);
  out.efficiency = rounded(row.efficiency);
  out.closed_form_step_ms = report::ratio6(row.closed_form_ms);
  out.global_batch = r.global_batch;
  if (!r.ranks.empty()) out.exposed_comm_ms = report::ms6(r.ranks.front().exposed_comm_ms);
  out.peak_memory_bytes = row.memory.peak();
  if (s.memory.device_bytes) out.fits = row.memory.peak() <= *s.memory.device_bytes;
  return out;
}

std::string cell(const std::optional<double>& v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : "-";
}

}  // namespace

Sweep run(const Scenario& scenario, const RunOptions& options) {
  return api::guarded([&] {
    auto data = std::make_shared<SweepData>();
    data->scenario = prepared(scenario, options);
    exec::ExecutionPolicy policy;
    policy.fast_path = !options.per_rank;
    const int threads = options.threads > 0 ? options.threads
                                            : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    scenarios::SweepHooks hooks;
    if (options.progress) {
      hooks.progress = [&options](std::size_t done, std::size_t total) { return options.progress({done, total}); };
    }
    data->result = scenarios::run_scenario(data->scenario, nullptr, threads, policy, {}, hooks);
    return Sweep(std::move(data));
  });
}

Sweep::Sweep(std::shared_ptr<const SweepData> data) : data_(std::move(data)) {
  for (const scenarios::SweepRow& row : data_->result.rows) runs_.push_back(row_of(row, data_->scenario));
}

const std::string& Sweep::scenario() const { return data_->scenario.name; }
const std::string& Sweep::engine() const { return data_->result.engine; }
const std::vector<Run>& Sweep::runs() const { return runs_; }

std::string Sweep::table() const {
  std::ostringstream out;
  report::write_table(out, data_->scenario, data_->result);
  return out.str();
}

std::string Sweep::json() const { return report::to_json(data_->scenario, data_->result); }

std::string Sweep::csv() const {
  std::ostringstream out;
  report::write_csv(out, data_->scenario, data_->result);
  return out.str();
}

std::string Sweep::svg() const { return report::sweep_svg(data_->scenario, data_->result); }

std::string Sweep::html() const {
  return api::guarded([&] {
    return report::sweep_html(data_->scenario, data_->result, std::nullopt, report::load_chart_assets());
  });
}

std::string Sweep::html_fragment() const {
  std::string out = fmt::format("<div class=\"ddpsim-sweep\"><p><b>{}</b>: {} engine, {}</p>\n",
                                report::html_escape(scenario()), report::html_escape(engine()),
                                report::html_escape(scenarios::describe_program(data_->scenario)));
  out += "<table><tr><th>bucket_cap_mb</th><th>world_size</th><th>outcome</th><th>step_ms</th>"
         "<th>closed_form_step_ms</th><th>speedup</th><th>efficiency</th><th>peak GiB</th></tr>\n";
  for (const Run& r : runs_) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td><td>{}</td>"
                       "<td>{:.3f}</td></tr>\n",
                       r.bucket_cap_mb, r.world_size, r.outcome, cell(r.step_ms, 3), r.closed_form_step_ms,
                       cell(r.speedup, 2), cell(r.efficiency, 3),
                       static_cast<double>(r.peak_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  return out + "</table>\n" + svg() + "</div>\n";
}

}  // namespace ddpsim
