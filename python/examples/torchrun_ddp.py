"""A user's own DDP script, as torchrun runs it: ResNet-18 (python/recipes/cnn.py's
model) for a few steps under gloo. Run on the emulated network (docs/emulated-network.md):

    build/cli/ddpsim network 1gbit --ranks 2 -- \
        "$(scripts/venv.sh)/bin/torchrun" --standalone --nproc_per_node 2 python/examples/torchrun_ddp.py

Nothing in it knows about the network: the launcher's shim gives each rank (torchrun's RANK)
its own address. Rank 0 prints the mean step and where its gloo connections run from.
"""
import os
import subprocess
import time

import torch
import torch.distributed as dist
import torchvision


def main(steps=5):
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet18(num_classes=10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    times = []
    for _ in range(steps + 1):
        t0 = time.perf_counter()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
        times.append(time.perf_counter() - t0)
    if dist.get_rank() == 0:
        peers = subprocess.run(["ss", "-tnH", "state", "established"], capture_output=True, text=True).stdout.split()
        ranks = os.environ.get("DDPSIM_RANK_ADDRS", "").split(",")
        seen = sorted({p.rsplit(":", 1)[0] for p in peers} & set(ranks))
        print(f"rank 0: mean step {sum(times[1:]) / steps * 1e3:.1f} ms over {steps} steps; "
              f"gloo between {', '.join(seen) or 'no rank address'}")
    dist.barrier()  # the other ranks keep their connections until rank 0 has looked
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
