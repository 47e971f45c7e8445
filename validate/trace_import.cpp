// Reading torch.profiler Chrome traces and summarising a DDP job's steps
// (validate/trace_import.hpp).

#include "validate/trace_import.hpp"
#include "formats/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "loader/input_error.hpp"
#include "validate/median.hpp"

namespace ddpsim::validate {
namespace {

using Json = nlohmann::json;
using scenarios::InputError;
using scenarios::Location;

Location at_offset(const std::string& text, std::size_t offset, const std::string& file) {
  offset = std::min(offset, text.size());
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {file, line, column};
}

// Byte offset of element `k` of the event array (the top-level array, or
// the top-level object's "traceEvents"); text.size() when not found. Run
// only to locate an error, so a plain scan.
std::size_t event_offset(const std::string& text, std::size_t k) {
  const bool legacy = text.find_first_not_of(" \n\r\t") < text.size() && text[text.find_first_not_of(" \n\r\t")] == '[';
  int depth = 0, events_depth = -1;
  bool in_string = false, escaped = false, expecting = false;
  std::size_t element = 0, string_start = 0;
  std::string last_key;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1) last_key = text.substr(string_start + 1, i - string_start - 1);
      }
      continue;
    }
    const bool blank = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (depth == events_depth && expecting && !blank && c != ']') {
      if (element++ == k) return i;
      expecting = false;
    }
    if (c == '"') {
      in_string = true;
      string_start = i;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (c == '[' && events_depth == -1 && ((legacy && depth == 1) || (!legacy && depth == 2 && last_key == "traceEvents"))) {
        events_depth = depth;
        expecting = true;
      }
    } else if (c == ']' || c == '}') {
      if (depth == events_depth) events_depth = -2;  // past the array
      --depth;
    } else if (c == ',' && depth == events_depth) {
      expecting = true;
    }
  }
  return text.size();
}

std::optional<std::int64_t> integer_arg(const Json& args, const char* key) {
  if (!args.contains(key)) return std::nullopt;
  const Json& v = args.at(key);
  if (!v.is_number_integer()) throw std::invalid_argument(fmt::format("args.{}", key));
  return v.get<std::int64_t>();
}

// One input's shape: a list of integers.
std::vector<std::int64_t> shape_of(const Json& d) {
  std::vector<std::int64_t> shape;
  for (const Json& n : d) {
    if (!n.is_number_integer()) throw std::invalid_argument("args.Input Dims");
    shape.push_back(n.get<std::int64_t>());
  }
  return shape;
}

// Input Dims: a shape per input; a TensorList input (torch 2.x: c10d::allreduce_'s tensors) is a
// list of shapes, one per tensor, taken in order.
std::vector<std::vector<std::int64_t>> dims_arg(const Json& args) {
  std::vector<std::vector<std::int64_t>> out;
  if (!args.contains("Input Dims")) return out;
  const Json& dims = args.at("Input Dims");
  if (!dims.is_array()) throw std::invalid_argument("args.Input Dims");
  for (const Json& d : dims) {
    if (!d.is_array()) throw std::invalid_argument("args.Input Dims");
    if (!d.empty() && d.front().is_array()) {
      for (const Json& tensor : d) {
        if (!tensor.is_array()) throw std::invalid_argument("args.Input Dims");
        out.push_back(shape_of(tensor));
      }
    } else {
      out.push_back(shape_of(d));
    }
  }
  return out;
}

std::string id_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// One complete event; std::invalid_argument naming the key that is wrong.
TraceEvent read_event(const Json& e) {
  TraceEvent out;
  if (!e.contains("name") || !e.at("name").is_string()) throw std::invalid_argument("name");
  out.name = e.at("name").get<std::string>();
  for (const auto& [key, value] : {std::pair{"ts", &out.ts_us}, std::pair{"dur", &out.dur_us}}) {
    if (!e.contains(key) || !e.at(key).is_number()) throw std::invalid_argument(key);
    *value = e.at(key).get<double>();
  }
  if (out.dur_us < 0) throw std::invalid_argument("dur");
  out.thread = (e.contains("pid") ? id_text(e.at("pid")) : "") + "/" + (e.contains("tid") ? id_text(e.at("tid")) : "");
  if (e.contains("args")) {
    const Json& args = e.at("args");
    if (!args.is_object()) throw std::invalid_argument("args");
    out.sequence = integer_arg(args, "Sequence number");
    out.forward_thread = integer_arg(args, "Fwd thread id");
    out.message_elements = integer_arg(args, "In msg nelems");
    out.input_dims = dims_arg(args);
  }
  return out;
}

}  // namespace

Trace parse_trace(const std::string& text, const std::string& file) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError(at_offset(text, e.byte > 0 ? e.byte - 1 : 0, file), "", "",
                     "expected a Chrome trace (JSON): " + std::string(e.what()));
  }
  Trace trace;
  trace.file = file;
  const Json* events = nullptr;
  if (doc.is_array()) {
    trace.format = "legacy autograd profiler";
    events = &doc;
  } else if (doc.is_object() && doc.contains("traceEvents") && doc.at("traceEvents").is_array()) {
    trace.format = "kineto";
    events = &doc.at("traceEvents");
  } else {
    throw InputError({file, 1, 1}, "traceEvents", "", "expected a Chrome trace: an array of events, or an object with a 'traceEvents' array");
  }
  for (std::size_t k = 0; k < events->size(); ++k) {
    const Json& e = (*events)[k];
    if (!e.is_object()) throw InputError(at_offset(text, event_offset(text, k), file), "traceEvents", e.dump().substr(0, 40), "expected an event object");
    if (!e.contains("ph") || e.at("ph") != "X") continue;  // metadata, instants, flows, counters
    try {
      trace.events.push_back(read_event(e));
    } catch (const std::invalid_argument& bad) {
      const std::string key = bad.what();
      const std::string value = e.contains(key) ? e.at(key).dump().substr(0, 40) : (key.rfind("args", 0) == 0 ? "" : "(missing)");
      throw InputError(at_offset(text, event_offset(text, k), file), key, value,
                       key == "ts" || key == "dur" ? "expected a number of microseconds (dur >= 0)"
                       : key == "name"             ? "the event's name, a string"
                                                   : "expected integers (Input Dims: lists of integers, or of such lists for a TensorList)");
    }
  }
  return trace;
}

Trace read_trace(const std::string& path) {
  std::string why;
  std::ifstream in = formats::open_input(path, why);
  if (!in) throw InputError({path, 0, 0}, "", "", why + ": expected a Chrome trace (torch.profiler's export_chrome_trace)");
  std::stringstream s;
  s << in.rdbuf();
  return parse_trace(s.str(), path);
}

namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }


// What one step [from, to) holds, in microseconds.
struct Step {
  double forward = 0, backward = 0, optimizer = 0;
  std::vector<double> ready;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<double> allreduce;
  std::vector<std::int64_t> elements;
  std::string reduce_name;
  std::vector<ModuleSpan> modules;  // in microseconds here
  int backward_nodes = 0, joined_nodes = 0;
};

bool inside(const TraceEvent& outer, const TraceEvent& e) {
  return &outer != &e && outer.thread == e.thread && outer.ts_us <= e.ts_us && e.ts_us + e.dur_us <= outer.ts_us + outer.dur_us;
}

// The leaf module spans of a step's forward [from, backward_start), and the
// backward nodes of the step joined to them by sequence number.
void read_modules(const Trace& trace, double from, double backward_start, double to, Step& step) {
  std::vector<const TraceEvent*> spans, forward_ops, nodes;
  for (const TraceEvent& e : trace.events) {
    if (e.ts_us < from || e.ts_us >= to) continue;
    const bool node = starts_with(e.name, "autograd::engine::evaluate_function: ");
    if (node) nodes.push_back(&e);
    if (e.ts_us >= backward_start) continue;
    if (starts_with(e.name, "nn.Module: ")) spans.push_back(&e);
    if (!node && e.sequence) forward_ops.push_back(&e);
  }
  std::vector<const TraceEvent*> leaves;
  for (const TraceEvent* s : spans) {
    if (std::none_of(spans.begin(), spans.end(), [&](const TraceEvent* t) { return inside(*s, *t); })) leaves.push_back(s);
  }
  std::stable_sort(leaves.begin(), leaves.end(), [](auto* a, auto* b) { return a->ts_us < b->ts_us; });
  for (const TraceEvent* l : leaves) {
    ModuleSpan m{l->name.substr(std::string_view("nn.Module: ").size()), l->dur_us, 0, {}};
    for (const TraceEvent& e : trace.events) {
      if (!inside(*l, e)) continue;
      for (const auto& d : e.input_dims) m.shapes.push_back(d);
    }
    step.modules.push_back(std::move(m));
  }
  step.backward_nodes = static_cast<int>(nodes.size());
  for (const TraceEvent* n : nodes) {
    if (!n->sequence) continue;
    const TraceEvent* op = nullptr;  // the outermost forward op with its sequence number
    for (const TraceEvent* f : forward_ops) {
      if (*f->sequence == *n->sequence && (op == nullptr || f->ts_us < op->ts_us)) op = f;
    }
    for (std::size_t k = 0; op != nullptr && k < leaves.size(); ++k) {
      if (leaves[k] == op || inside(*leaves[k], *op)) {
        step.modules[k].backward_ms += n->dur_us;
        ++step.joined_nodes;
        break;
      }
    }
  }
}

// The elements of a collective's tensor; -1 when unknown (or not a tensor's: a
// negative dimension, or a product past 2^53).
std::int64_t elements_of(const TraceEvent& e) {
  if (e.message_elements) return *e.message_elements;
  if (e.input_dims.empty() || e.input_dims.front().empty()) return -1;
  std::int64_t n = 1;
  for (std::int64_t d : e.input_dims.front()) {
    if (d < 0 || (d > 0 && n > (std::int64_t{1} << 53) / d)) return -1;
    n *= d;
  }
  return n;
}

Step read_step(const Trace& trace, double from, double to, int index) {
  Step step;
  double backward_start = std::numeric_limits<double>::infinity();
  std::vector<const TraceEvent*> accumulate, reduce, enqueue;
  for (const TraceEvent& e : trace.events) {
    if (e.ts_us < from || e.ts_us >= to) continue;
    if (starts_with(e.name, "autograd::engine::evaluate_function: ")) backward_start = std::min(backward_start, e.ts_us);
    if (e.name == "torch::autograd::AccumulateGrad") accumulate.push_back(&e);
    if (starts_with(e.name, "Optimizer.step#") || starts_with(e.name, "Optimizer.zero_grad#")) step.optimizer += e.dur_us;
    if (e.name == "gloo:all_reduce" || e.name == "nccl:all_reduce") reduce.push_back(&e);
    if (e.name == "c10d::allreduce_") enqueue.push_back(&e);
  }
  if (accumulate.empty()) {
    throw InputError({trace.file, 0, 0}, "traceEvents", fmt::format("step {}", index),
                     "expected a backward in every step (no torch::autograd::AccumulateGrad event between this step's start "
                     "and the next's)");
  }
  std::stable_sort(accumulate.begin(), accumulate.end(), [](auto* a, auto* b) { return a->ts_us < b->ts_us; });
  backward_start = std::min(backward_start, accumulate.front()->ts_us);
  step.forward = backward_start - from;
  for (const TraceEvent* a : accumulate) {
    step.ready.push_back(a->ts_us + a->dur_us - backward_start);
    if (!a->input_dims.empty()) step.shapes.push_back(a->input_dims.front());
  }
  step.backward = *std::max_element(step.ready.begin(), step.ready.end());
  read_modules(trace, from, backward_start, to, step);
  for (const TraceEvent* r : reduce.empty() ? enqueue : reduce) {
    step.reduce_name = r->name;
    step.allreduce.push_back(r->dur_us);
    step.elements.push_back(elements_of(*r));
  }
  return step;
}

}  // namespace

// Without ProfilerStep#N or DistributedDataParallel.forward: the model's own spans (torch 2.x,
// with_stack or with_modules): each outermost "nn.Module: " span named as the first one starts a step.
std::vector<double> module_starts(const Trace& trace, std::string& name) {
  std::vector<const TraceEvent*> spans;
  for (const TraceEvent& e : trace.events) {
    if (starts_with(e.name, "nn.Module: ")) spans.push_back(&e);
  }
  std::sort(spans.begin(), spans.end(), [](const TraceEvent* a, const TraceEvent* b) { return a->ts_us < b->ts_us; });
  std::vector<double> starts;
  double outer_end = -std::numeric_limits<double>::infinity();
  for (const TraceEvent* e : spans) {
    const bool outermost = e->ts_us >= outer_end;
    if (outermost) outer_end = e->ts_us + e->dur_us;
    if (!outermost) continue;
    if (name.empty()) name = e->name;
    if (e->name == name) starts.push_back(e->ts_us);
  }
  return starts;
}

constexpr const char* kHowToRecord =
    "record steps with torch.profiler.profile(activities=[ProfilerActivity.CPU] (CUDA too on a GPU), "
    "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3), on_trace_ready=lambda p: "
    "p.export_chrome_trace(PATH)) and prof.step() after each training step; or wrap the model in "
    "DistributedDataParallel; or profile with with_stack=True (torch 2.x) so that the model's nn.Module spans mark "
    "its steps";

TraceSummary summarize(const Trace& trace) {
  TraceSummary out;
  if (trace.events.empty()) {
    throw InputError({trace.file, 0, 0}, "traceEvents", "", std::string("expected operator events: the trace holds "
                     "none (the profiler recorded no step, or not this process); ") + kHowToRecord);
  }
  std::vector<double> starts;
  for (const TraceEvent& e : trace.events) {
    if (starts_with(e.name, "ProfilerStep#")) starts.push_back(e.ts_us);
  }
  out.delimiter = "ProfilerStep#N";
  if (starts.empty()) {
    out.delimiter = "DistributedDataParallel.forward";
    for (const TraceEvent& e : trace.events) {
      if (e.name == "DistributedDataParallel.forward") starts.push_back(e.ts_us);
    }
  }
  if (starts.empty()) {
    std::string top;
    starts = module_starts(trace, top);
    out.delimiter = top;
  }
  if (starts.empty()) {
    throw InputError({trace.file, 0, 0}, "traceEvents", "", std::string("expected step markers: ProfilerStep#N, "
                     "DistributedDataParallel.forward or the model's nn.Module spans, and the trace has none; ") +
                     kHowToRecord);
  }
  std::sort(starts.begin(), starts.end());
  std::vector<Step> steps;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const double to = i + 1 < starts.size() ? starts[i + 1] : std::numeric_limits<double>::infinity();
    steps.push_back(read_step(trace, starts[i], to, static_cast<int>(i)));
    if (steps.back().ready.size() != steps.front().ready.size()) {
      throw InputError({trace.file, 0, 0}, "traceEvents", fmt::format("step {}: {} AccumulateGrad events", i, steps.back().ready.size()),
                       fmt::format("expected as many as step 0 ({}): the same gradients every step", steps.front().ready.size()));
    }
  }
  out.steps = static_cast<int>(steps.size());
  const auto med = [&](auto field) {
    std::vector<double> v;
    for (const Step& s : steps) v.push_back(field(s) / 1e3);
    return median(v);
  };
  out.forward_ms = med([](const Step& s) { return s.forward; });
  out.backward_ms = med([](const Step& s) { return s.backward; });
  out.optimizer_ms = med([](const Step& s) { return s.optimizer; });
  for (std::size_t j = 0; j < steps.front().ready.size(); ++j) {
    out.ready_ms.push_back(med([j](const Step& s) { return s.ready[j]; }));
  }
  out.ready_shapes = steps.front().shapes;
  out.backward_nodes = steps.front().backward_nodes;
  out.joined_nodes = steps.front().joined_nodes;
  const bool same_modules = std::all_of(steps.begin(), steps.end(), [&](const Step& s) {
    return s.modules.size() == steps.front().modules.size() &&
           std::equal(s.modules.begin(), s.modules.end(), steps.front().modules.begin(),
                      [](const ModuleSpan& a, const ModuleSpan& b) { return a.shapes == b.shapes; });
  });
  for (std::size_t k = 0; same_modules && k < steps.front().modules.size(); ++k) {
    ModuleSpan m = steps.front().modules[k];
    m.forward_ms = med([k](const Step& s) { return s.modules[k].forward_ms; });
    m.backward_ms = med([k](const Step& s) { return s.modules[k].backward_ms; });
    out.modules.push_back(std::move(m));
  }
  const Step& last = steps.back();  // the first may hold DDP's bucket rebuild
  out.allreduce_name = last.reduce_name;
  for (std::size_t b = 0; b < last.allreduce.size(); ++b) {
    out.allreduce_ms.push_back(last.allreduce[b] / 1e3);
    out.allreduce_elements.push_back(last.elements[b]);
  }
  return out;
}

}  // namespace ddpsim::validate
