"""What DistributedDataParallel itself adds on one rank.

DDP's Reducer copies each gradient into its bucket from an autograd hook as
the gradient becomes ready, all-reduces the bucket, and in finalize_backward
copies the reduced bucket back into the gradients (divided by the world
size). On one rank the all-reduce is nearly free, so loss.backward() under
DDP minus the bare model's backward is that per-byte work: the scenario key
ddp.bucket_copy_GBps = 2 x gradient bytes / (DDP backward - bare backward),
half charged at the hooks, half after each bucket's all-reduce
(docs/cost-models.md#ddps-own-work).

The recipe is built afresh and run under DDP on a one-rank group (gloo on
CPU, nccl on a GPU; a file store: no port), the same steps as the bare run,
on the same clock (clock.py), medians compared.
"""
import os
import statistics
import tempfile

import torch
import torch.distributed as dist

from . import clock as ddp_clock
from . import recipe as recipes


def _median_ms(values):
    return statistics.median(values) / 1e6


def ddp_times(recipe_path, steps, warmup, device="cpu", bucket_cap_mb=None, first_bucket_mb=None):
    """Median forward and backward (ms) of the recipe under DDP on one rank (cpu: gloo; cuda: nccl,
    timed with CUDA events), and the bytes of the buckets DDP rebuilt."""
    torch.manual_seed(0)
    built = recipes.to_device(recipes.load(recipe_path), device)
    clock = ddp_clock.for_device(device)
    own = not dist.is_initialized()  # a caller's one-rank group is used as it is
    if not own and dist.get_world_size() != 1:
        raise RuntimeError("profile measures DDP's own work on one rank; this process is in a larger group")
    with tempfile.TemporaryDirectory() as tmp:
        if own:
            dist.init_process_group("nccl" if device == "cuda" else "gloo",
                                    init_method=f"file://{os.path.join(tmp, 'store')}", rank=0, world_size=1)
        try:
            ids = [torch.cuda.current_device()] if device == "cuda" else None
            ddp = torch.nn.parallel.DistributedDataParallel(built["model"], device_ids=ids,
                                                            **recipes.ddp_bucket_args(bucket_cap_mb, first_bucket_mb))
            fwd, bwd = [], []
            # At least two warm-up steps: DDP rebuilds its buckets after the first.
            for step in range(max(2, warmup) + steps):
                t0, t1, t2, _ = recipes.timed_step(ddp, built, clock.mark)
                if step >= max(2, warmup):
                    clock.sync()
                    t0, t1, t2 = (clock.resolve(t) for t in (t0, t1, t2))
                    fwd.append(t1 - t0)
                    bwd.append(t2 - t1)
            data = ddp._get_ddp_logging_data()
            buckets = data.get("rebuilt_bucket_sizes") if data.get("has_rebuilt_buckets") else data.get("bucket_sizes")
            buckets = [int(b) for b in str(buckets or "").split(",") if b.strip()]
            del ddp
        finally:
            if own:
                dist.destroy_process_group()
    return _median_ms(fwd), _median_ms(bwd), buckets


def bucket_copy(gradient_bytes, bare_backward_ms, ddp_backward_ms):
    """(GB/s or None, the added ms): the rate at which DDP's two copies of the gradients account for
    what it adds to backward; None when it adds nothing measurable."""
    added = ddp_backward_ms - bare_backward_ms
    if added <= 0 or gradient_bytes <= 0:
        return None, added
    return 2 * gradient_bytes / (added * 1e6), added
