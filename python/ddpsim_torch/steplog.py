"""StepLog: a user's own training loop writes the rank logs `ddpsim validate` reads.

    from ddpsim_torch import StepLog

    with StepLog("runs/mine") as log:          # writes runs/mine.rank<RANK>.json when the block ends
        for x, y in loader:
            with log.step(examples=len(x)):     # one training step: forward, backward, optimizer
                loss_fn(model(x), y).backward()
                optimizer.step()
                optimizer.zero_grad()

Each step's `step_ms` is the host clock (time.monotonic_ns) around the block; with device="cuda" the
GPU is synchronised before each reading, so the step holds its kernels. The log is the format of
formats/measured_run.hpp (what `ddpsim measure` writes): world size and rank from torch.distributed
(else WORLD_SIZE and RANK, else 1 and 0), the host, the backend, and the emulated network's check when
the script runs under `ddpsim network` (DDPSIM_NETWORK_CHECK). `ddpsim validate --scenario S.yaml
--measured runs/mine` compares the steps after the scenario's warm-up with its prediction.

The log has a clock of its own: milliseconds since the StepLog was made. Each step's `start_ms` is on
it, and so is each fault `ddpsim network --fault` applied during the run (the record's `applied`, each
with `at_ms`). Made just before DDP's constructor, that clock is a scenario's: a fault's `at_ms` in the
log is the `at_ms` of the scenario's fault that predicts it (a slow_link or link_down fault).
"""
import json
import os
import socket
import time
from contextlib import contextmanager


class StepLog:
    """Times each `with log.step():` block and writes PREFIX.rank<r>.json at the end of the `with`."""

    def __init__(self, prefix, device="cpu"):
        if device not in ("cpu", "cuda"):
            raise ValueError(f"device '{device}': expected cpu or cuda")
        self.prefix, self.device, self.steps = prefix, device, []
        self.origin_ns = time.monotonic_ns()  # the log's clock: each step's start_ms, a fault's at_ms
        self.applied = []  # the faults `ddpsim network` applied, with at_ms (after write())

    def _sync(self):
        if self.device == "cuda":
            import torch
            torch.cuda.synchronize()

    @contextmanager
    def step(self, examples=0):
        """One training step; `examples`: the batch it trained on (0 when not said)."""
        self._sync()
        t0 = time.monotonic_ns()
        yield
        self._sync()
        t1 = time.monotonic_ns()
        self.steps.append({"iteration": len(self.steps), "epoch": 0, "examples": int(examples), "skipped": False,
                           "step_ms": (t1 - t0) / 1e6, "start_ms": round((t0 - self.origin_ns) / 1e6, 3)})

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.write()
        return False

    def _group(self):
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank(), dist.get_world_size(), f"torch {dist.get_backend()}"
        except ImportError:
            pass
        return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")), "none"

    def write(self):
        """Writes PREFIX.rank<r>.json now (the `with` block does it at its end); returns its path."""
        rank, world, transport = self._group()
        log = {"rank": rank, "world_size": world, "host": socket.gethostname(),
               "ddpsim_version": "ddpsim_torch StepLog", "git_commit": "", "device": self.device,
               "transport": transport, "resumed_from_step": -1, "epochs": [], "steps": self.steps}
        check = os.environ.get("DDPSIM_NETWORK_CHECK")
        if check and os.path.isfile(check):
            with open(check, encoding="utf-8") as f:
                log["network"] = json.load(f)
            for applied in log["network"].get("applied", []):  # `ddpsim network --fault`, on this log's clock
                applied["at_ms"] = round((applied["clock_ns"] - self.origin_ns) / 1e6, 3)
            self.applied = log["network"].get("applied", [])
        folder = os.path.dirname(self.prefix)
        if folder:
            os.makedirs(folder, exist_ok=True)
        path = f"{self.prefix}.rank{rank}.json"
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(log, indent=2) + "\n")
        return path
