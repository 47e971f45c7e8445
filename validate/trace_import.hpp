#pragma once
// ddpsim import-trace: what a torch.profiler Chrome trace of a DDP job says
// about its steps, and the scenario rewritten with those numbers.
//
// Three trace formats (../shared/reference/torch_bridge.md section 1):
//   legacy    a bare JSON array, integer microseconds, no args (torch built
//             without Kineto, as Debian's 1.13);
//   kineto    {"traceEvents": [...]}, integer microseconds (1.13 era) or
//             fractional (2.x), args with "Input Dims", "Sequence number",
//             "Fwd thread id", "In msg nelems"; fwdbwd flows in 2.1+.
// Only complete events (ph "X") are used. Steps are delimited by
// ProfilerStep#N or, without a schedule, by DistributedDataParallel.forward.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/scenario.hpp"

namespace ddpsim::validate {

struct TraceEvent {
  std::string name;
  double ts_us = 0, dur_us = 0;
  std::string thread;  ///< "pid/tid"
  std::optional<std::int64_t> sequence, forward_thread;
  std::vector<std::vector<std::int64_t>> input_dims;  ///< "Input Dims", when recorded
  std::optional<std::int64_t> message_elements;       ///< record_param_comms' "In msg nelems"
};

struct Trace {
  std::string file;
  std::string format;  ///< "legacy autograd profiler" or "kineto"
  std::vector<TraceEvent> events;  ///< complete events, in file order
};

/// Reads a Chrome trace; throws scenarios::InputError located at the
/// offending character or event (file:line:column) on anything malformed.
Trace read_trace(const std::string& path);
/// The same from text; `file` names it in errors.
Trace parse_trace(const std::string& text, const std::string& file);

/// A leaf module of the forward: a `nn.Module: <Cls>_<id>` span
/// (torch.profiler with_stack=True) that holds no other.
struct ModuleSpan {
  std::string name;
  double forward_ms = 0;  ///< the span's duration
  /// The backward nodes joined to a forward op inside the span, their
  /// durations summed: each `autograd::engine::evaluate_function: X`'s
  /// "Sequence number" is that of the outermost forward op with it on the
  /// forward thread (torch 1.13 has no fwdbwd flows; "Fwd thread id" is
  /// autograd's thread counter, not the tid, and is not matched).
  double backward_ms = 0;
  std::vector<std::vector<std::int64_t>> shapes;  ///< "Input Dims" of the ops inside, when recorded
};

/// Medians over the trace's steps, in ms.
struct TraceSummary {
  int steps = 0;
  std::string delimiter;  ///< "ProfilerStep#N", "DistributedDataParallel.forward" or the model's outermost "nn.Module: X"
  double forward_ms = 0;   ///< step start to the first backward node (the loss included)
  double backward_ms = 0;  ///< first backward node to the last AccumulateGrad's end
  double optimizer_ms = 0; ///< Optimizer.step# and Optimizer.zero_grad# spans
  /// Per AccumulateGrad of a step, in time order: its end from backward's start.
  std::vector<double> ready_ms;
  /// Their "Input Dims" (the gradient's shape), when recorded.
  std::vector<std::vector<std::int64_t>> ready_shapes;
  /// The all-reduce spans of a step: gloo:/nccl:all_reduce, else c10d::allreduce_.
  std::string allreduce_name;
  std::vector<double> allreduce_ms;
  std::vector<std::int64_t> allreduce_elements;  ///< from "Input Dims" or "In msg nelems", when recorded
  /// The forward's leaf modules, in time order (empty without module spans,
  /// or when the steps disagree on them); medians over the steps.
  std::vector<ModuleSpan> modules;
  int backward_nodes = 0, joined_nodes = 0;  ///< of a step: backward nodes, and those joined to a module
};

/// Throws scenarios::InputError when the trace has no step or a step has no backward.
TraceSummary summarize(const Trace& trace);

/// The scenario's text with the trace's numbers (model.optimizer_ms; per
/// layer, backward from the AccumulateGrad times and forward scaled to the
/// measured total; or the whole-model times), every change commented.
/// Throws scenarios::InputError where the trace and the scenario disagree
/// (the number of gradients, a shape no parameter has).
std::string import_into_scenario(const scenarios::Scenario& scenario, const std::string& scenario_text,
                                 const Trace& trace, const TraceSummary& summary);

}  // namespace ddpsim::validate
