"""A user's own DDP script, as torchrun runs it: ResNet-18 on a batch of 4 images of 32 x 32
(python/recipes/cnn.py's model, batch and optimizer) under gloo. On an emulated cluster
(docs/emulated-network.md, "A cluster of hosts"), each rank a host:

    build/cli/ddpsim network --cluster scenarios/cluster_2x4.yaml -- \
        "$(scripts/python.sh)" python/examples/torchrun_ddp.py --out runs/mine
    build/cli/ddpsim validate --scenario scenarios/cluster_2x4.yaml --measured runs/mine

Nothing in it knows about the network: `ddpsim network` starts it once a host with torchrun's
environment. ddpsim_torch.StepLog times each step and writes runs/mine.rank<r>.json, the logs
`ddpsim validate` reads. Rank 0 prints the mean step and the addresses its gloo connections reach.
"""
import argparse
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # ddpsim_torch, run from a checkout
from ddpsim_torch import StepLog  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--out", default=None, help="write the rank logs PREFIX.rank<r>.json (StepLog)")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    # The log's clock starts here, before DDP's constructor (its broadcast), as a scenario's time 0
    # does: a fault `ddpsim network --fault` applies gets its at_ms on that clock.
    log = StepLog(args.out or os.devnull)
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    for _ in range(args.steps):
        with log.step(examples=len(x)):
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
    if args.out:
        log.write()
    if dist.get_rank() == 0:
        peers = subprocess.run(["ss", "-tnH", "state", "established"], capture_output=True, text=True).stdout.split()
        seen = sorted({p.rsplit(":", 1)[0] for p in peers if p.startswith("127.") and not p.startswith("127.0.0.1:")})
        later = [s["step_ms"] for s in log.steps[2:]] or [s["step_ms"] for s in log.steps]
        print(f"rank 0: mean step {sum(later) / len(later):.1f} ms over {len(later)} steps after 2; "
              f"gloo to {', '.join(seen) or 'no other address'}")
        for f in log.applied:
            print(f"rank 0: {f['what']} at {f['at_ms']:.1f} ms on the log's clock (a scenario's at_ms)")
    dist.barrier()  # the other ranks keep their connections until rank 0 has looked
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
