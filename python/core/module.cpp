// ddpsim._core: the compiled core of the Python package (python/ddpsim/),
// the public C++ API (include/ddpsim/ddpsim.hpp) bound one to one; the
// package's Python layer (python/ddpsim/__init__.py) gives it its shape.
// Simulations release the GIL; ddpsim::Error becomes ddpsim.Error
// (python/ddpsim/errors.py) with its exit code and location.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ddpsim/ddpsim.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ddpsim.Error(message, exit_code, file, line, column, key), raised for a ddpsim::Error.
void raise_error(const ddpsim::Error& e) {
  const nb::object type = nb::module_::import_("ddpsim.errors").attr("Error");
  const nb::object args = nb::make_tuple(e.what(), e.exit_code(), e.file(), e.line(), e.column(), e.key());
  PyErr_SetObject(type.ptr(), args.ptr());
}

// The progress callback, called from the sweep's threads: the GIL taken for
// each call; a Python exception in it (KeyboardInterrupt among them) cancels.
ddpsim::ProgressCallback progress_of(const nb::object& callback) {
  if (callback.is_none()) return {};
  PyObject* fn = callback.ptr();  // the caller's argument: alive until run returns
  return [fn](const ddpsim::Progress& p) {
    const nb::gil_scoped_acquire gil;
    PyObject* result = PyObject_CallFunction(fn, "nn", static_cast<Py_ssize_t>(p.done), static_cast<Py_ssize_t>(p.total));
    if (result == nullptr) {
      PyErr_Clear();
      return false;
    }
    const bool go_on = result == Py_None || PyObject_IsTrue(result) == 1;
    Py_DECREF(result);
    return go_on;
  };
}

ddpsim::Sweep run(const ddpsim::Scenario& s, const std::string& engine, const std::vector<int>& world_sizes,
                  int threads, bool per_rank, double max_rank_ops, double max_memory_gb, const nb::object& progress) {
  ddpsim::RunOptions o;
  o.engine = engine;
  o.world_sizes = world_sizes;
  o.threads = threads;
  o.per_rank = per_rank;
  o.max_rank_ops = max_rank_ops;
  o.max_memory_gb = max_memory_gb;
  o.progress = progress_of(progress);
  const nb::gil_scoped_release released;
  return ddpsim::run(s, o);
}

ddpsim::Advice advise(const ddpsim::Scenario& s, const std::string& objective, const std::vector<int>& world_sizes,
                      std::optional<std::int64_t> batch_min, std::optional<std::int64_t> batch_max, int threads,
                      const std::vector<std::string>& programs, int top) {
  ddpsim::AdviseOptions o;
  o.objective = objective;
  o.world_sizes = world_sizes;
  o.global_batch_min = batch_min;
  o.global_batch_max = batch_max;
  o.threads = threads;
  o.programs = programs;
  o.top = top;
  const nb::gil_scoped_release released;
  return ddpsim::advise(s, o);
}

void bind_results(nb::module_& m) {
  nb::class_<ddpsim::Run>(m, "Run")
      .def_ro("world_size", &ddpsim::Run::world_size)
      .def_ro("bucket_cap_mb", &ddpsim::Run::bucket_cap_mb)
      .def_ro("outcome", &ddpsim::Run::outcome)
      .def_ro("step_ms", &ddpsim::Run::step_ms)
      .def_ro("baseline_step_ms", &ddpsim::Run::baseline_step_ms)
      .def_ro("speedup", &ddpsim::Run::speedup)
      .def_ro("efficiency", &ddpsim::Run::efficiency)
      .def_ro("closed_form_step_ms", &ddpsim::Run::closed_form_step_ms)
      .def_ro("global_batch", &ddpsim::Run::global_batch)
      .def_ro("exposed_comm_ms", &ddpsim::Run::exposed_comm_ms)
      .def_ro("peak_memory_bytes", &ddpsim::Run::peak_memory_bytes)
      .def_ro("fits", &ddpsim::Run::fits);
  nb::class_<ddpsim::Sweep>(m, "Sweep")
      .def_prop_ro("scenario", &ddpsim::Sweep::scenario)
      .def_prop_ro("engine", &ddpsim::Sweep::engine)
      .def_prop_ro("runs", &ddpsim::Sweep::runs)
      .def("table", &ddpsim::Sweep::table)
      .def("json", &ddpsim::Sweep::json)
      .def("csv", &ddpsim::Sweep::csv)
      .def("svg", &ddpsim::Sweep::svg)
      .def("html", &ddpsim::Sweep::html)
      .def("html_fragment", &ddpsim::Sweep::html_fragment);
  nb::class_<ddpsim::MemoryRow>(m, "MemoryRow")
      .def_ro("world_size", &ddpsim::MemoryRow::world_size)
      .def_ro("parameters", &ddpsim::MemoryRow::parameters)
      .def_ro("gradients", &ddpsim::MemoryRow::gradients)
      .def_ro("optimizer_states", &ddpsim::MemoryRow::optimizer_states)
      .def_ro("buckets", &ddpsim::MemoryRow::buckets)
      .def_ro("unsharded", &ddpsim::MemoryRow::unsharded)
      .def_ro("activations", &ddpsim::MemoryRow::activations)
      .def_ro("peak", &ddpsim::MemoryRow::peak)
      .def_ro("peak_at", &ddpsim::MemoryRow::peak_at)
      .def_ro("fits", &ddpsim::MemoryRow::fits);
  nb::class_<ddpsim::Bucket>(m, "Bucket")
      .def_ro("bytes", &ddpsim::Bucket::bytes)
      .def_ro("dtype", &ddpsim::Bucket::dtype)
      .def_ro("params", &ddpsim::Bucket::params);
  nb::class_<ddpsim::BucketReport>(m, "BucketReport")
      .def_ro("bucket_cap_bytes", &ddpsim::BucketReport::bucket_cap_bytes)
      .def_ro("initial", &ddpsim::BucketReport::initial)
      .def_ro("rebuilt", &ddpsim::BucketReport::rebuilt)
      .def_ro("rebuild_iteration", &ddpsim::BucketReport::rebuild_iteration)
      .def_ro("text", &ddpsim::BucketReport::text)
      .def_ro("json", &ddpsim::BucketReport::json);
  nb::class_<ddpsim::MemoryReport>(m, "MemoryReport")
      .def_ro("scenario", &ddpsim::MemoryReport::scenario)
      .def_ro("program", &ddpsim::MemoryReport::program)
      .def_ro("device_bytes", &ddpsim::MemoryReport::device_bytes)
      .def_ro("rows", &ddpsim::MemoryReport::rows)
      .def_ro("text", &ddpsim::MemoryReport::text)
      .def_ro("json", &ddpsim::MemoryReport::json)
      .def("all_fit", &ddpsim::MemoryReport::all_fit);
}

void bind_advice(nb::module_& m) {
  nb::class_<ddpsim::Candidate>(m, "Candidate")
      .def_ro("description", &ddpsim::Candidate::description)
      .def_ro("program", &ddpsim::Candidate::program)
      .def_ro("bucket_cap_mb", &ddpsim::Candidate::bucket_cap_mb)
      .def_ro("comm_hook", &ddpsim::Candidate::comm_hook)
      .def_ro("accumulation", &ddpsim::Candidate::accumulation)
      .def_ro("world_size", &ddpsim::Candidate::world_size)
      .def_ro("checkpointing", &ddpsim::Candidate::checkpointing)
      .def_ro("step_ms", &ddpsim::Candidate::step_ms)
      .def_ro("samples_per_s", &ddpsim::Candidate::samples_per_s)
      .def_ro("efficiency", &ddpsim::Candidate::efficiency)
      .def_ro("peak_bytes", &ddpsim::Candidate::peak_bytes)
      .def_ro("fits", &ddpsim::Candidate::fits)
      .def_ro("outcome", &ddpsim::Candidate::outcome)
      .def_ro("objective", &ddpsim::Candidate::objective);
  nb::class_<ddpsim::Advice>(m, "Advice")
      .def_ro("scenario", &ddpsim::Advice::scenario)
      .def_ro("objective", &ddpsim::Advice::objective)
      .def_ro("ranked", &ddpsim::Advice::ranked)
      .def_ro("dropped", &ddpsim::Advice::dropped)
      .def_ro("reasons", &ddpsim::Advice::reasons)
      .def_ro("text", &ddpsim::Advice::text)
      .def_ro("json", &ddpsim::Advice::json)
      .def_ro("html", &ddpsim::Advice::html);
  nb::class_<ddpsim::Explanation>(m, "Explanation")
      .def_ro("folder", &ddpsim::Explanation::folder)
      .def_ro("stuck", &ddpsim::Explanation::stuck)
      .def_ro("collective_seq_id", &ddpsim::Explanation::collective_seq_id)
      .def_ro("waiting", &ddpsim::Explanation::waiting)
      .def_ro("missing", &ddpsim::Explanation::missing)
      .def_ro("culprit", &ddpsim::Explanation::culprit)
      .def_ro("reason", &ddpsim::Explanation::reason)
      .def_ro("fix", &ddpsim::Explanation::fix)
      .def_ro("text", &ddpsim::Explanation::text);
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ddpsim's compiled core (include/ddpsim/ddpsim.hpp); use the ddpsim package's functions";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ddpsim::Error& e) {
      raise_error(e);
    }
  });
  nb::class_<ddpsim::Scenario>(m, "Scenario")
      .def_prop_ro("name", &ddpsim::Scenario::name)
      .def_prop_ro("text", &ddpsim::Scenario::text)
      .def_prop_ro("source", &ddpsim::Scenario::source)
      .def_prop_ro("world_sizes", &ddpsim::Scenario::world_sizes)
      .def_prop_ro("engine", &ddpsim::Scenario::engine)
      .def_prop_ro("program", &ddpsim::Scenario::program)
      .def("to_json", &ddpsim::Scenario::to_json);
  bind_results(m);
  bind_advice(m);
  m.def("load", &ddpsim::load, "path"_a);
  m.def("load_text", &ddpsim::load_text, "text"_a, "source"_a);
  m.def("json_to_yaml", &ddpsim::json_to_yaml, "json"_a);
  m.def("run", &run, "scenario"_a, "engine"_a, "world_sizes"_a, "threads"_a, "per_rank"_a, "max_rank_ops"_a,
        "max_memory_gb"_a, "progress"_a.none());
  m.def("memory", [](const ddpsim::Scenario& s, std::optional<int> w) { return ddpsim::memory(s, w); }, "scenario"_a,
        "world_size"_a.none());
  m.def("buckets", &ddpsim::buckets, "scenario"_a);
  m.def("advise", &advise, "scenario"_a, "objective"_a, "world_sizes"_a, "global_batch_min"_a.none(),
        "global_batch_max"_a.none(), "threads"_a, "programs"_a, "top"_a);
  m.def("explain", &ddpsim::explain, "dump_dir"_a);
  m.def("version", &ddpsim::version);
}
