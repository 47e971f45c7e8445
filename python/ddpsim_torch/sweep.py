"""sweep: time all-reduces on W processes and write them as ddpsim-real's
sweep JSON (formats/measured_run.hpp: CollectiveSweep), which `ddpsim
calibrate --measured` reads. Sizes double from --min-bytes to --max-bytes
(default 8 B to 256 MiB); each size: one warm-up, then --iters calls timed
one by one, and their mean (--stat mean, the default: what nccl-tests and
ddpsim-real report, and the statistic of the mean step `measure` writes, so a
prediction built from the sweep pays the slow calls a training step pays) or
median (--stat median: a shared CPU machine's outliers move a mean by more
than the 8 B to 64 KiB range moves the time, which a latency fit may not
want); algbw = bytes / time,
busbw = algbw x 2(W-1)/W (nccl-tests). gloo on CPU tensors, nccl on each
rank's GPU (synchronised after each call).
"""
import socket
import statistics
import time

import torch
import torch.distributed as dist

from . import launch, network


def _rank_main(rank, world, min_bytes, max_bytes, iters, out, backend, stat):
    device = "cuda" if backend == "nccl" else "cpu"  # nccl: this rank's GPU, set by launch
    rows, size = [], min_bytes
    while size <= max_bytes:
        n = max(1, size // 4)
        x = torch.ones(n, dtype=torch.float32, device=device)
        dist.all_reduce(x)  # warm-up
        dist.barrier()
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            dist.all_reduce(x)
            if device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        us = (statistics.mean(times) if stat == "mean" else statistics.median(times)) * 1e6
        algbw = n * 4 / (us * 1e3)
        rows.append({"bytes": n * 4, "time_us": us, "algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (world - 1) / world})
        size *= 2
    if rank == 0:
        doc = {"transport": f"torch {backend}", "host": socket.gethostname(), "ddpsim_version": "ddpsim_torch",
               "git_commit": "", "world_size": world, "statistic": stat, "sweep": rows}
        network.write_recorded(doc, out)


def run(args):
    where = network.enter_for(args, args.world_size)
    launch.run_ranks(_rank_main, args.world_size, args.backend, args.min_bytes, args.max_bytes, args.iters, args.out,
                     args.backend, args.stat)
    print(f"sweep: {args.world_size} ranks, {args.backend}, {args.min_bytes} to {args.max_bytes} bytes, {args.stat} of {args.iters} calls{where}; wrote {args.out}")
    return 0
