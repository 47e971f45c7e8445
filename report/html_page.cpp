#include "report/html_page.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace ddpsim::report {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// </script> inside an inlined library or spec would end the script element.
std::string script_safe(std::string text) {
  std::string::size_type at = 0;
  while ((at = text.find("</script", at)) != std::string::npos) {
    text.replace(at, 2, "<\\/");
    at += 3;
  }
  return text;
}

constexpr const char* kStyle = R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
caption{text-align:left;font-weight:600;padding:4px 0}.chart{margin:8px 0 4px}.note{color:#666}
pre#errors{color:#b00;white-space:pre-wrap}pre#errors:empty{display:none})";

// Catches what would go to the console, before any library runs.
constexpr const char* kErrorCatcher = R"(window.__ddpsimErrors=[];
window.addEventListener('error',function(e){window.__ddpsimErrors.push(String(e.message||e));});
window.addEventListener('unhandledrejection',function(e){window.__ddpsimErrors.push(String(e.reason));});
(function(){var ce=console.error;console.error=function(){window.__ddpsimErrors.push(Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments);};})();)";

// Draws every chart, then records the outcome on <body> and in #errors.
constexpr const char* kDraw = R"((function(){var ids=Object.keys(SPECS),drawn=0;
function done(){document.body.dataset.chartsRendered=String(drawn);document.body.dataset.done='1';
document.getElementById('errors').textContent=window.__ddpsimErrors.join('\n');}
if(typeof vegaEmbed!=='function'){done();return;}
Promise.all(ids.map(function(id){return vegaEmbed('#'+id,SPECS[id],{actions:false,renderer:'svg'})
.then(function(){drawn++;}).catch(function(e){window.__ddpsimErrors.push(id+': '+e);});})).then(done,done);})();)";

}  // namespace

std::string chart_assets_dir() {
  if (const char* env = std::getenv("DDPSIM_VEGA_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / "share/ddpsim/vega";
    if (fs::exists(beside / "vega-bundle.js", ec)) return beside.string();
  }
#ifdef DDPSIM_VEGA_BUILD_DIR
  return DDPSIM_VEGA_BUILD_DIR;
#else
  return (exe.parent_path().parent_path() / "share/ddpsim/vega").string();
#endif
}

ChartAssets load_chart_assets() {
  ChartAssets a;
  const fs::path dir = chart_assets_dir();
  const std::optional<std::string> bundle = read_text(dir / "vega-bundle.js");
  if (!bundle) {
    a.missing = fmt::format("the chart libraries (vega, vega-lite, vega-embed: vega-bundle.js) are not in {}: the build "
                            "writes them with vl-convert-python (scripts/setup.sh installs it); tables only",
                            dir.string());
    return a;
  }
  a.bundle = *bundle;
  return a;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void HtmlPage::heading(const std::string& text, const std::string& id) {
  body_ += id.empty() ? fmt::format("<h2>{}</h2>\n", html_escape(text))
                      : fmt::format("<h2 id=\"{}\">{}</h2>\n", html_escape(id), html_escape(text));
}

void HtmlPage::paragraph(const std::string& text) { body_ += fmt::format("<p>{}</p>\n", html_escape(text)); }

void HtmlPage::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::string& caption) {
  body_ += "<table>";
  if (!caption.empty()) body_ += fmt::format("<caption>{}</caption>", html_escape(caption));
  body_ += "<thead><tr>";
  for (const std::string& h : header) body_ += fmt::format("<th>{}</th>", html_escape(h));
  body_ += "</tr></thead><tbody>\n";
  for (const std::vector<std::string>& row : rows) {
    body_ += "<tr>";
    for (const std::string& cell : row) body_ += fmt::format("<td>{}</td>", html_escape(cell));
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table>\n";
}

void HtmlPage::chart(const std::string& id, nlohmann::ordered_json spec) {
  spec["$schema"] = "https://vega.github.io/schema/vega-lite/v6.json";
  body_ += fmt::format("<div class=\"chart\" id=\"{}\"></div>\n", html_escape(id));
  specs_.emplace_back(id, std::move(spec));
}

std::string HtmlPage::render(const ChartAssets& assets) const {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{}</style>\n"
      "<script>{}</script>\n",
      html_escape(title_), kStyle, kErrorCatcher);
  const bool draw = assets.ok() && !specs_.empty();
  if (draw) {
    out += "<script>" + script_safe(assets.bundle) + "</script>\n";
  }
  out += fmt::format("</head>\n<body data-charts-expected=\"{}\" data-charts-rendered=\"0\">\n<h1>{}</h1>\n",
                     draw ? specs_.size() : 0, html_escape(title_));
  if (!assets.ok() && !specs_.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(assets.missing));
  out += body_;
  out += "<pre id=\"errors\"></pre>\n";
  nlohmann::ordered_json specs = nlohmann::ordered_json::object();
  for (const auto& [id, spec] : specs_) specs[id] = spec;
  out += "<script>var SPECS=" + script_safe(draw ? specs.dump() : std::string("{}")) + ";\n" + kDraw + "</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ddpsim::report
