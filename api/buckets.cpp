// ddpsim::buckets (include/ddpsim/ddpsim.hpp): DDP's gradient buckets,
// initial and rebuilt, as ddpsim buckets prints and writes them.

#include <nlohmann/json.hpp>
#include <sstream>

#include "api/api_data.hpp"
#include "report/sweep_report.hpp"

namespace ddpsim {
namespace {

// The JSON's bucket list (report/sweep_report.cpp writes it) as structures.
std::vector<Bucket> buckets_of(const nlohmann::json& list) {
  std::vector<Bucket> out;
  for (const auto& b : list) {
    out.push_back({b.at("bytes").get<std::int64_t>(), b.at("dtype").get<std::string>(),
                   b.at("params").get<std::vector<std::string>>()});
  }
  return out;
}

}  // namespace

BucketReport buckets(const Scenario& scenario) {
  return api::guarded([&] {
    const scenarios::Scenario& s = scenario.data().scenario;
    BucketReport out;
    std::ostringstream text;
    report::write_buckets(text, s);
    out.text = text.str();
    out.json = report::buckets_to_json(s);
    const nlohmann::json doc = nlohmann::json::parse(out.json);
    out.bucket_cap_bytes = doc.at("bucket_cap_bytes").get<std::int64_t>();
    out.initial = buckets_of(doc.at("initial"));
    if (!doc.at("rebuilt").is_null()) out.rebuilt = buckets_of(doc.at("rebuilt"));
    if (!doc.at("rebuild_iteration").is_null()) out.rebuild_iteration = doc.at("rebuild_iteration").get<int>();
    return out;
  });
}

}  // namespace ddpsim
