"""Running a function on W ranks: spawned processes sharing a file store, or,
under torchrun (RANK and WORLD_SIZE set), this process as one of them."""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _entry(rank, world, backend, store, target, args):
    from . import fabric_run
    fabric_run.join_host(rank)  # on an emulated cluster (fabric.py): into this rank's host
    addresses = os.environ.get("DDPSIM_RANK_ADDRS")  # on an emulated network (network.py): this rank's address,
    if addresses:                                     # which the preloaded shim binds its sockets to
        os.environ["DDPSIM_RANK_ADDR"] = addresses.split(",")[rank]
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        target(rank, world, *args)
    finally:
        dist.destroy_process_group()


def under_torchrun():
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ


def run_ranks(target, world, backend, *args):
    """target(rank, world, *args) on every rank, inside an initialised process group."""
    if under_torchrun():
        rank, launched = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        if launched != world:
            raise SystemExit(f"ddpsim_torch: --world-size {world}, but torchrun started {launched} ranks")
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group(backend, init_method="env://")
        try:
            target(rank, world, *args)
        finally:
            dist.destroy_process_group()
        return
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")  # a file store: no port to collide with
        mp.spawn(_entry, args=(world, backend, store, target, args), nprocs=world, join=True)
