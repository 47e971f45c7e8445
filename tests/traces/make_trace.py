#!/usr/bin/python3
"""Makes the torch 1.13 fixture of `ddpsim import-trace`: a recipe under
DistributedDataParallel on one gloo rank, 3 steps unprofiled, then 2 under
torch.profiler (CPU, record_shapes, with_stack), exported as a Chrome trace.
Debian's torch is built without Kineto, so the file is the legacy autograd
profiler's: a bare array, integer microseconds, no args.

    /usr/bin/python3 tests/traces/make_trace.py python/recipes/mlp.py tests/traces/mlp_torch113_cpu.json
"""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ddpsim_torch import recipe  # noqa: E402


def main(recipe_path, out):
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        torch.manual_seed(0)
        built = recipe.load(recipe_path)
        (x, y), loss_fn, optimizer = built["batch"], built["loss_fn"], built["optimizer"]
        ddp = torch.nn.parallel.DistributedDataParallel(built["model"])

        def step():
            loss_fn(recipe.call_model(ddp, x), y).backward()
            optimizer.step()
            optimizer.zero_grad()

        for _ in range(3):
            step()
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:
            for _ in range(2):
                step()
        prof.export_chrome_trace(out)
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
