"""overlap_bench: the overlap verb's ranks (torch, gloo on CPU): compute and
an all-reduce alone and at once, and the JSON overlap.py reads; the method
and the figures are described in overlap.py."""
import socket
import statistics
import time

import torch
import torch.distributed as dist

from . import launch, network
from .overlap import FORMAT, OverlapError, read, slowdowns, summarise


def _chunk(a, b):
    torch.mm(a, b)


def _compute_alone(a, b, chunks):
    t0 = time.perf_counter()
    for _ in range(chunks):
        _chunk(a, b)
    return (time.perf_counter() - t0) / chunks


def _allreduce_alone(x):
    dist.barrier()
    t0 = time.perf_counter()
    dist.all_reduce(x, async_op=True).wait()
    return time.perf_counter() - t0


def _both(x, a, b):
    dist.barrier()
    t0 = time.perf_counter()
    work = dist.all_reduce(x, async_op=True)
    n = 0
    while not work.is_completed():
        _chunk(a, b)
        n += 1
    work.wait()
    return time.perf_counter() - t0, n


def _one_size(nbytes, a, b, chunks, reps):
    x = torch.ones(max(1, nbytes // 4), dtype=torch.float32)
    dist.all_reduce(x)  # warm-up
    rows = []
    for _ in range(reps):
        chunk = _compute_alone(a, b, chunks)
        alone = _allreduce_alone(x)
        t, n = _both(x, a, b)
        rows.append({"chunk_s": chunk, "allreduce_s": alone, "both_s": t, "chunks_beside": n})
    chunk = statistics.median(r["chunk_s"] for r in rows)
    alone = statistics.median(r["allreduce_s"] for r in rows)
    both = statistics.median(r["both_s"] for r in rows)
    beside = statistics.median(r["chunks_beside"] for r in rows)
    out = {"bytes": x.numel() * 4, "chunk_ms": chunk * 1e3, "allreduce_ms": alone * 1e3, "both_ms": both * 1e3,
           "chunks_beside": beside, "reps": rows}
    out.update(slowdowns(chunk, alone, both, beside))
    return out


def _rank_main(rank, world, sizes, matrix, chunks, reps, threads, out):
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    a, b = torch.randn(matrix, matrix), torch.randn(matrix, matrix)
    _compute_alone(a, b, chunks)  # warm-up
    rows = [_one_size(n, a, b, chunks, reps) for n in sizes]
    if rank != 0:
        return
    doc = {"format": FORMAT, "backend": "gloo", "device": "cpu", "world_size": world, "threads": threads,
           "host": socket.gethostname(), "torch": torch.__version__, "matrix": matrix, "chunks": chunks, "reps": reps,
           "sizes": rows}
    try:
        doc["contention"] = summarise(rows)
    except OverlapError as e:
        doc["error"] = str(e)  # read() refuses the file, saying why (exit 2), outside the ranks
    network.write_recorded(doc, out)


def run(args):
    where = network.enter_for(args, args.world_size)
    launch.run_ranks(_rank_main, args.world_size, "gloo", [int(mb * (1 << 20)) for mb in args.mb], args.matrix,
                     args.chunks, args.reps, args.threads, args.out)
    s, c, _ = read(args.out)
    print(f"overlap: {args.world_size} ranks, gloo{where}: compute_slowdown {s:.3g}, comm_slowdown {c:.3g}; "
          f"wrote {args.out}")
    return 0
