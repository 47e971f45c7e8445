"""ddpsim: a deterministic simulator of PyTorch data-parallel training (DDP, FSDP).

    import ddpsim
    s = ddpsim.load("scenarios/scaling_lab.yaml")       # or a dict that mirrors the YAML
    r = ddpsim.run(s, world_sizes=[8, 64, 512])
    for run in r.runs:
        print(run.world_size, run.step_ms)
    r.to_dataframe()                                    # with pandas installed

The functions call the compiled core (include/ddpsim/ddpsim.hpp): the same
results as the ddpsim command, byte for byte in every rendering. Errors are
ddpsim.Error, with the command line's exit code and the input's location.
ddpsim.torch profiles a PyTorch model object into a scenario.
"""
import os
import sys

from .errors import Error


def _point_at_installed_files():
    """The SimGrid engine's module and the report's chart libraries, where the
    wheel installed them (its data: lib/ddpsim, share/ddpsim under the prefix)."""
    found = {
        "DDPSIM_SIMGRID_MODULE": os.path.join(sys.prefix, "lib", "ddpsim", "libddpsim_simgrid.so"),
        "DDPSIM_VEGA_DIR": os.path.join(sys.prefix, "share", "ddpsim", "vega"),
    }
    for var, path in found.items():
        if not os.environ.get(var) and os.path.exists(path):
            os.environ[var] = path


_point_at_installed_files()

from . import _core  # noqa: E402  (after the environment above: the core reads it)
from ._results import Advice, Bucket, BucketReport, Candidate, Explanation, MemoryReport, MemoryRow, Result, Run, _copy  # noqa: E402
from ._scenario import Scenario, load  # noqa: E402

__version__ = "0.1.0"

__all__ = ["Error", "Scenario", "Result", "Run", "MemoryReport", "MemoryRow", "Advice", "Candidate", "Explanation",
           "Bucket", "BucketReport", "load", "run", "memory", "buckets", "advise", "explain", "version"]


def _as_scenario(scenario):
    return scenario if isinstance(scenario, Scenario) else load(scenario)


def run(scenario, *, world_sizes=None, engine=None, threads=0, per_rank=False, max_rank_ops=2e11,
        max_memory_gb=8.0, progress=None):
    """Simulates every world size (and bucket cap) of `scenario` (a Scenario, a path or a dict).

    world_sizes: instead of the scenario's; engine: "analytic" or "simgrid" instead of the
    scenario's; threads: runs at once (0: one per core; the result does not depend on it);
    progress(done, total): called after each run, False (or an exception) stops the sweep
    with ddpsim.Error (exit_code 130). Returns a Result."""
    s = _as_scenario(scenario)
    sweep = _core.run(s._core, engine or "", list(world_sizes or []), int(threads), bool(per_rank),
                      float(max_rank_ops), float(max_memory_gb), progress)
    return Result(sweep)


def memory(scenario, *, world_size=None):
    """Memory per rank by kind at each of the scenario's world sizes (or at world_size):
    a MemoryReport, as `ddpsim memory` prints it."""
    return MemoryReport(_core.memory(_as_scenario(scenario)._core, world_size))


def buckets(scenario):
    """DDP's gradient buckets, initial and rebuilt, as `ddpsim buckets`: a BucketReport."""
    return BucketReport(_core.buckets(_as_scenario(scenario)._core))


def advise(scenario, *, objective="throughput", world_sizes=None, global_batch=None, threads=1, programs=None,
           top=20):
    """Searches the scenario's open configurations (docs/advise.md), as `ddpsim advise`:
    objective is step, throughput, gpu_hours or goodput; global_batch a (min, max) range.
    Returns an Advice, best first, with the reasons."""
    low, high = global_batch if global_batch is not None else (None, None)
    return Advice(_core.advise(_as_scenario(scenario)._core, objective, list(world_sizes or []), low, high,
                               int(threads), list(programs or []), int(top)))


def explain(dump_dir):
    """The hang report of a folder of flight-recorder dumps (or of its subfolders), as
    `ddpsim explain`: a list of Explanation, one a folder."""
    return [_copy(Explanation, e) for e in _core.explain(os.fspath(dump_dir))]


def version():
    """ddpsim's version and the commit it was built from."""
    return _core.version()
