// ddpsim::advise (include/ddpsim/ddpsim.hpp): the advisor's search on a
// loaded scenario, its ranking and reasons, and ddpsim advise's renderings.

#include <sstream>

#include "advise/advise_html.hpp"
#include "advise/advise_report.hpp"
#include "advise/advisor.hpp"
#include "api/api_data.hpp"
#include "report/html_page.hpp"
#include "loader/input_error.hpp"

namespace ddpsim {
namespace {

Candidate candidate_of(const advisor::Evaluated& e) {
  Candidate c;
  c.description = e.config.describe();
  c.program = e.config.program;
  c.bucket_cap_mb = e.config.bucket_cap_mb;
  c.comm_hook = e.config.comm_hook;
  c.accumulation = e.config.accumulation;
  c.world_size = e.config.world_size;
  c.checkpointing = e.config.checkpointing;
  c.step_ms = e.step_ms;
  c.samples_per_s = e.samples_per_s;
  c.efficiency = e.efficiency;
  c.peak_bytes = e.peak_bytes;
  c.fits = e.fits;
  c.outcome = e.outcome;
  c.objective = e.objective;
  return c;
}

advisor::AdviseOptions options_of(const AdviseOptions& o) {
  advisor::AdviseOptions out;
  const auto objective = advisor::parse_objective(o.objective);
  if (!objective) {
    throw scenarios::InputError({"options", 0, 0}, "objective", o.objective,
                                "expected one of step, throughput, gpu_hours, goodput");
  }
  out.objective = *objective;
  out.world_sizes = o.world_sizes;
  out.global_batch_min = o.global_batch_min;
  out.global_batch_max = o.global_batch_max;
  out.threads = o.threads;
  out.programs = o.programs;
  return out;
}

}  // namespace

Advice advise(const Scenario& scenario, const AdviseOptions& options) {
  return api::guarded([&] {
    const advisor::Advice a = advisor::advise_text(scenario.text(), scenario.source(), options_of(options));
    Advice out;
    out.scenario = a.scenario;
    out.objective = std::string(advisor::to_string(a.objective));
    for (const advisor::Evaluated& e : a.ranked) out.ranked.push_back(candidate_of(e));
    for (const advisor::Evaluated& e : a.dropped) out.dropped.push_back(candidate_of(e));
    out.reasons = a.reasons;
    std::ostringstream text;
    advisor::write_text(text, a, options.top);
    out.text = text.str();
    out.json = advisor::to_json(a).dump(2) + "\n";
    out.html = advisor::to_html(a, report::load_chart_assets());
    return out;
  });
}

}  // namespace ddpsim
