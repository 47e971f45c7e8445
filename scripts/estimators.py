"""PyTorch's own estimators beside ddpsim's prediction (docs/validation.md, "PyTorch's estimators"):
peak memory per rank and compute per step of each recipe at W = 1 and 2, under DistributedDataParallel
on gloo (CPU).

Per recipe:
- ddpsim: `ddpsim profile RECIPE` (the optimizer's state and the activations autograd saves, read
  from the recipe; the compute times measured alone), then `ddpsim memory` (peak per rank) and the
  scenario's compute per step (forward + backward + optimizer);
- MemTracker (torch.distributed._tools): DDP(model) trained on W gloo processes, rank 0 tracked over
  two steps after two warm-up ones (the buckets rebuilt): its peak per rank, by category; it counts
  every live tensor through a dispatch mode, so on the CPU it stands for the measurement;
- the measured step: the same steps' median wall time on rank 0;
- RuntimeEstimator (torch.distributed._tools), in its two modes, for compute per step: both need an
  accelerator in the pinned torch (the benchmark mode records torch.Event on the accelerator's
  stream, the roofline mode asserts torch.accelerator.is_available()); on a machine without one the
  table says so instead of a number (validate/gpu/ runs them on the device).

Prints the table and writes it as JSON (--json). Usage (about 2 minutes for the four recipes):
    $(scripts/python.sh) scripts/estimators.py build/cli/ddpsim /tmp/estimators [--recipes mlp,cnn] [--json F]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from ddpsim_torch import recipe as recipes  # noqa: E402

MIB = 1 << 20


def _tracked_rank(rank, world, recipe_path, store, out):
    """One rank of DDP(model) on gloo; rank 0 tracks its memory with MemTracker and times its steps."""
    from torch.distributed._tools.mem_tracker import MemTracker
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    torch.manual_seed(0)
    built = recipes.load(recipe_path)
    model = torch.nn.parallel.DistributedDataParallel(built["model"])
    (inputs, targets), optimizer = built["batch"], built["optimizer"]

    def step():
        t0 = time.perf_counter_ns()
        built["loss_fn"](recipes.call_model(model, inputs), targets).backward()
        optimizer.step()
        optimizer.zero_grad()
        return (time.perf_counter_ns() - t0) / 1e6

    for _ in range(2):
        step()
    tracker = MemTracker()
    tracker.track_external(model, optimizer)
    times = []
    with tracker:
        for _ in range(2):
            times.append(step())
            tracker.reset_mod_stats()  # per-module stats hold one iteration; the peak is kept
    times += [step() for _ in range(3)]
    if rank == 0:
        peak = tracker.get_tracker_snapshot("peak")
        cpu = next(v for k, v in peak.items() if str(k) == "cpu")
        with open(out, "w") as f:
            json.dump({"peak": {str(k): int(v) for k, v in cpu.items()}, "step_ms": statistics.median(times)}, f)
    dist.barrier()
    dist.destroy_process_group()


def memtracker(recipe_path, world, work):
    store, out = os.path.join(work, "store"), os.path.join(work, f"memtracker_w{world}.json")
    for f in (store, out):
        if os.path.exists(f):
            os.remove(f)
    mp.start_processes(_tracked_rank, args=(world, recipe_path, store, out), nprocs=world, start_method="spawn")
    with open(out) as f:
        return json.load(f)


def runtime_estimator(recipe_path):
    """RuntimeEstimator's compute per step in each mode, or why it gives none here."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.runtime_estimator import RuntimeEstimator
    out = {}
    for mode in ("operator-level-benchmark", "operator-level-cost-model"):
        if not torch.accelerator.is_available():
            out[mode] = "needs an accelerator (torch.accelerator.is_available() is False)"
            continue
        with FakeTensorMode():
            built = recipes.to_device(recipes.load(recipe_path), "cuda")
            estimator = RuntimeEstimator()
            with estimator(estimate_mode_type=mode):
                built["loss_fn"](recipes.call_model(built["model"], built["batch"][0]), built["batch"][1]).backward()
                built["optimizer"].step()
        out[mode] = estimator.total_compute_time
    return out


def ddpsim_side(ddpsim, recipe_path, work):
    name = os.path.basename(recipe_path)[:-3]
    scenario = os.path.join(work, f"{name}.yaml")
    said = subprocess.run([ddpsim, "profile", recipe_path, "--out", scenario, "--world-size", "1,2", "--steps", "5",
                           "--warmup", "2"], check=True, capture_output=True, text=True).stdout
    times = re.search(r"forward ([0-9.]+) ms, backward ([0-9.]+) ms, optimizer ([0-9.]+) ms", said)
    # What ddpsim said before profile recorded memory's inputs: SGD's (no) state, no activations.
    with open(scenario) as f:
        text = f.read()
    bare = os.path.join(work, f"{name}_without_memory_inputs.yaml")
    with open(bare, "w") as f:
        f.write(re.sub(r", activation_MB: [0-9.e+-]+", "", re.sub(r"\noptimizer: .*", "", text)))
    rows = []
    for path in (scenario, bare):
        mem_json = path + ".memory.json"
        subprocess.run([ddpsim, "memory", path, "--json", mem_json], check=True, capture_output=True)
        with open(mem_json) as f:
            rows.append({r["world_size"]: r for r in json.load(f)["rows"]})
    return rows[0], rows[1], sum(float(t) for t in times.groups())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("ddpsim")
    p.add_argument("work")
    p.add_argument("--recipes", default="mlp,cnn,transformer,embedding")
    p.add_argument("--json")
    p.add_argument("--max-error-pct", type=float,
                   help="exit 1 when ddpsim's peak is off MemTracker's by more than this on any row")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    table = []
    for name in a.recipes.split(","):
        path = os.path.join(ROOT, "python", "recipes", f"{name}.py")
        rows, before, compute = ddpsim_side(a.ddpsim, path, a.work)
        estimated = runtime_estimator(path)
        for world in (1, 2):
            tracked = memtracker(path, world, a.work)
            table.append({"recipe": name, "world_size": world, "ddpsim_peak_MiB": rows[world]["peak_bytes"] / MIB,
                          "ddpsim_activations_MiB": rows[world]["activations_bytes"] / MIB,
                          "ddpsim_without_memory_inputs_MiB": before[world]["peak_bytes"] / MIB,
                          "memtracker_peak_MiB": tracked["peak"]["Total"] / MIB,
                          "memtracker_by_kind_MiB": {k: v / MIB for k, v in tracked["peak"].items()},
                          "ddpsim_compute_ms": compute, "measured_step_ms": tracked["step_ms"],
                          "runtime_estimator": estimated})
    print("recipe       W  peak MiB: ddpsim  MemTracker  error   (SGD, no activations: error)   "
          "compute ms: ddpsim  measured DDP step")
    worst = 0.0
    for r in table:
        err = 100 * (r["ddpsim_peak_MiB"] - r["memtracker_peak_MiB"]) / r["memtracker_peak_MiB"]
        old = 100 * (r["ddpsim_without_memory_inputs_MiB"] - r["memtracker_peak_MiB"]) / r["memtracker_peak_MiB"]
        worst = max(worst, abs(err))
        print(f"{r['recipe']:<12} {r['world_size']}  {r['ddpsim_peak_MiB']:14.2f} {r['memtracker_peak_MiB']:11.2f} "
              f"{err:+6.1f}%   {r['ddpsim_without_memory_inputs_MiB']:10.2f}: {old:+6.1f}%   "
              f"{r['ddpsim_compute_ms']:18.2f} {r['measured_step_ms']:18.2f}")
    for mode, why in table[0]["runtime_estimator"].items():
        print(f"RuntimeEstimator {mode}: {why if isinstance(why, str) else f'{why:.3f} ms'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)
    if a.max_error_pct is not None:
        ok = worst <= a.max_error_pct
        print(f"{'ok' if ok else 'FAIL'}: the largest peak-memory error against MemTracker is {worst:.1f}% "
              f"(bound {a.max_error_pct:g}%)")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
