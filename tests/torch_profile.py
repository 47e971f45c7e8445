#!/usr/bin/python3
"""ddpsim_torch profile against real DistributedDataParallel.

For each recipe in python/recipes/: `python3 -m ddpsim_torch profile` writes
a scenario; `ddpsim check` must accept it and `ddpsim run` simulate it; and
its gradient_ready_order must be the order DDP itself saw
(_get_ddp_logging_data()'s prev_iteration_grad_ready_order_indices, gloo,
one process), parameter by parameter.

Exits 77 (ctest: skipped) without torch.
Usage: torch_profile.py DDPSIM_BINARY WORK_DIR
"""
import os
import subprocess
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    print(f"SKIPPED: torch is not installed ({e})")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from ddpsim_torch import recipe  # noqa: E402
from ddpsim_torch.__main__ import main as ddpsim_torch_main  # noqa: E402  (in this interpreter: it has torch)


def profiled_order(path):
    """The names under model.gradient_ready_order in a scenario written by profile."""
    names, inside = [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("  gradient_ready_order:"):
            inside = True
        elif inside and line.startswith("    - "):
            names.append(line.strip()[2:].strip('"'))
        elif inside:
            break
    return names


# The scenario's optimizer key for each recipe's torch.optim (its state after a step: python/ddpsim_torch/memory.py).
OPTIMIZERS = {"cnn.py": "sgd_momentum", "mlp.py": "sgd_momentum", "embedding.py": "sgd", "tied.py": "sgd",
              "reordered.py": "adam", "transformer.py": "adam"}


def written_optimizer(path):
    for line in open(path, encoding="utf-8"):
        if line.startswith("optimizer: "):
            return line.split()[1]
    return None


def refused_optimizer(work):
    """A recipe whose optimizer ddpsim's memory model cannot express (RMSprop): profile exits 2, naming it."""
    path = os.path.join(work, "rmsprop.py")
    with open(path, "w") as f:
        f.write("import torch\n"
                "def build():\n"
                "    model = torch.nn.Linear(4, 2)\n"
                "    return {'model': model, 'batch': (torch.randn(8, 4), torch.randn(8, 2)),\n"
                "            'loss_fn': torch.nn.functional.mse_loss,\n"
                "            'optimizer': torch.optim.RMSprop(model.parameters())}\n")
    done = subprocess.run([sys.executable, "-m", "ddpsim_torch", "profile", path, "--out", path + ".yaml", "--bare",
                           "--steps", "1", "--warmup", "1"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    return done.returncode == 2 and "optimizer RMSprop keeps 1 state tensor(s) per parameter" in done.stderr


def ddp_order(recipe_path):
    """The ready order DDP's Reducer recorded, as parameter names."""
    built = recipe.load(recipe_path)
    model = torch.nn.parallel.DistributedDataParallel(built["model"])
    inputs, targets = built["batch"]
    for _ in range(3):
        built["loss_fn"](recipe.call_model(model, inputs), targets).backward()
    indices = model._get_ddp_logging_data()["prev_iteration_grad_ready_order_indices"]
    names = [n for n, _ in model.module.named_parameters()]
    return [names[int(i)] for i in indices.split(", ")]


def main():
    ddpsim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    store = os.path.join(work, "store")  # a file store: no port to collide with other tests
    if os.path.exists(store):
        os.remove(store)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    recipes_dir = os.path.join(ROOT, "python", "recipes")
    failures = 0
    for name in sorted(f for f in os.listdir(recipes_dir) if f.endswith(".py")):
        path = os.path.join(recipes_dir, name)
        out = os.path.join(work, name.replace(".py", ".yaml"))
        if ddpsim_torch_main(["profile", path, "--out", out, "--steps", "3", "--warmup", "1"]) != 0:
            raise SystemExit(f"{name}: profile failed")
        subprocess.run([ddpsim, "check", out], check=True)
        subprocess.run([ddpsim, "run", out], check=True, stdout=subprocess.DEVNULL)
        mine, theirs = profiled_order(out), ddp_order(path)
        ok = mine == theirs
        failures += not ok
        print(f"{name}: ready order {'matches' if ok else 'DIFFERS from'} DDP's ({len(mine)} parameters)"
              + ("" if ok else f"\n  profile: {mine}\n  DDP:     {theirs}"))
        optimizer = written_optimizer(out)
        failures += optimizer != OPTIMIZERS[name]
        print(f"{name}: optimizer {optimizer} ({'as' if optimizer == OPTIMIZERS[name] else 'NOT'} its torch.optim: "
              f"{OPTIMIZERS[name]})")
    dist.destroy_process_group()
    refused = refused_optimizer(work)
    failures += not refused
    print(f"RMSprop: {'refused with exit 2, named' if refused else 'NOT refused as expected'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
