"""Process groups whose all-reduces cross a node's one NIC at once, for real: run once a host under
`ddpsim network --cluster` (tests/torch_cluster.py does). G strided groups ({0, G, ...}, {1, G + 1,
...}: hybrid sharding's replicas, one rank a node) each all-reduce BYTES of float32, first group 0
alone while the others wait, then all G at once; each call's time is the slowest rank's. Rank 0 writes
{"alone_us", "together_us", ...} (means over --iters calls after one warm-up) to --out.

Usage (under ddpsim network --cluster S.yaml): cluster_groups.py --groups G --bytes N --iters K --out F.json
"""
import argparse
import json
import time

import torch
import torch.distributed as dist


def timed(tensor, group, active, iters):
    """Mean over iters of the slowest rank's time (us) of an all-reduce in `group` when `active`."""
    times = []
    for i in range(iters + 1):
        dist.barrier()
        t0 = time.monotonic()
        if active:
            dist.all_reduce(tensor, group=group)
        took = torch.tensor([time.monotonic() - t0])
        dist.all_reduce(took, op=dist.ReduceOp.MAX)
        if i > 0:
            times.append(took.item() * 1e6)
    return sum(times) / len(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, required=True)
    parser.add_argument("--bytes", type=int, required=True)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--out", required=True)
    a = parser.parse_args()
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    rank, world = dist.get_rank(), dist.get_world_size()
    groups = [dist.new_group(list(range(g, world, a.groups))) for g in range(a.groups)]
    mine = rank % a.groups
    tensor = torch.ones(a.bytes // 4)
    alone = timed(tensor, groups[mine], mine == 0, a.iters)
    together = timed(tensor, groups[mine], True, a.iters)
    if rank == 0:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"groups": a.groups, "world_size": world, "bytes": a.bytes, "iters": a.iters,
                       "alone_us": alone, "together_us": together}, f, indent=2)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
