// ddpsim::explain (include/ddpsim/ddpsim.hpp): the hang report of
// flight-recorder dumps, whoever wrote them (docs/flight-recorder.md).

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "api/api_data.hpp"
#include "formats/flight_recorder.hpp"
#include "loader/input_error.hpp"
#include "validate/explain.hpp"

namespace ddpsim {
namespace {

// The folders to explain: DIR itself when it holds dumps, else its subfolders that do (the
// W<w>/ and cap<c>_W<w>/ that ddpsim run --flight-recorder DIR writes), in name order.
std::vector<std::string> dump_folders(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {dir};
  bool files = false;
  std::vector<std::string> subs;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    if (f.is_regular_file()) files = true;
    if (f.is_directory()) subs.push_back(f.path().string());
  }
  if (files || subs.empty()) return {dir};
  std::sort(subs.begin(), subs.end());
  return subs;
}

Explanation explain_folder(const std::string& folder) {
  std::vector<formats::FlightRecord> dumps;
  try {
    dumps = formats::read_flight_records(folder);
  } catch (const formats::FormatError& e) {
    throw scenarios::InputError({e.file(), 0, 0}, e.key(), "",
                                std::string("expected a flight-recorder dump: ") + e.what());
  }
  const validate::Explanation e = validate::explain(dumps);
  Explanation out;
  out.folder = folder;
  out.stuck = e.stuck;
  out.collective_seq_id = e.collective_seq_id;
  out.waiting = e.waiting;
  out.missing = e.missing;
  out.culprit = e.culprit;
  out.reason = e.reason;
  out.fix = e.fix;
  std::ostringstream text;
  text << fmt::format("# {}: {} dump(s), ranks {} to {}\n", folder, dumps.size(), dumps.front().rank,
                      dumps.back().rank);
  validate::write_explanation(text, e);
  out.text = text.str();
  return out;
}

}  // namespace

std::vector<Explanation> explain(const std::string& dump_dir) {
  return api::guarded([&] {
    std::vector<Explanation> out;
    for (const std::string& folder : dump_folders(dump_dir)) out.push_back(explain_folder(folder));
    return out;
  });
}

}  // namespace ddpsim
