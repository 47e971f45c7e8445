"""A trace of a recipe as torch.profiler writes it, for `ddpsim import-trace`: the recipe under
DistributedDataParallel on one gloo rank (--bare: the model alone), 3 steps unprofiled, then 2 under
torch.profiler (CPU, record_shapes, with_stack; --no-shapes: record_shapes off), exported as a
Chrome trace. --cuda: on the current GPU under nccl, ProfilerActivity.CUDA too (validate/gpu/). --schedule records with torch.profiler.schedule(wait=0, warmup=1, active=2) and
prof.step() after each step (ProfilerStep#N markers), one more step for the warm-up.

Debian's torch 1.13 (built without Kineto) wrote tests/traces/mlp_torch113_cpu.json, the legacy
form: a bare array, integer microseconds, no args. The pinned torch 2.x writes Kineto's form;
ctest oracle.torch_import_trace makes its traces with this script (tests/torch_import_trace.py).

    $(scripts/python.sh) tests/traces/make_trace.py python/recipes/mlp.py /tmp/mlp.json [--schedule] [--bare]
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ddpsim_torch import recipe  # noqa: E402


def main(recipe_path, out, schedule=False, bare=False, shapes=True, cuda=False):
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("nccl" if cuda else "gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        torch.manual_seed(0)
        built = recipe.to_device(recipe.load(recipe_path), "cuda" if cuda else "cpu")
        (x, y), loss_fn, optimizer = built["batch"], built["loss_fn"], built["optimizer"]
        ddp = built["model"] if bare else torch.nn.parallel.DistributedDataParallel(built["model"])

        def step():
            loss_fn(recipe.call_model(ddp, x), y).backward()
            optimizer.step()
            optimizer.zero_grad()

        for _ in range(3):
            step()
        plan = torch.profiler.schedule(wait=0, warmup=1, active=2, repeat=1) if schedule else None
        ready = (lambda p: p.export_chrome_trace(out)) if schedule else None
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities, record_shapes=shapes, with_stack=True, schedule=plan,
                     on_trace_ready=ready) as prof:
            for _ in range(3 if schedule else 2):
                step()
                if schedule:
                    prof.step()
        if not schedule:
            prof.export_chrome_trace(out)
        dist.destroy_process_group()


if __name__ == "__main__":
    flags = sys.argv[3:]
    main(sys.argv[1], sys.argv[2], "--schedule" in flags, "--bare" in flags, "--no-shapes" not in flags, "--cuda" in flags)
