"""Ranks that share a host: the profile taken with the others training beside it.

W ranks of a CPU job on one host share its cores, caches and memory
bandwidth, so each rank's forward and backward can run slower than the same
rank alone, and a profile of one process alone then predicts that compute
too fast. (On the 2-core development machine a co-runner made no
difference above the drift: docs/validation.md, "Ranks that share a
host".) `profile --ranks-per-host N` starts N - 1 processes that
train the recipe (bare, no DistributedDataParallel: no collective of their
own) for as long as the profile runs, so the profiled rank's times are
measured under the load of a full host. Each co-runner builds the recipe
afresh, uses --threads threads, and runs a step before the profile starts;
it inherits the environment (the MALLOC_ settings too: glibc reads them
when a process starts).

GPU ranks each own a device: there the option is refused (profile.py).
"""
import multiprocessing

import torch

from . import recipe as recipes


def _train(path, threads, ready, stop, steps):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    built = recipes.load(path)
    recipes.timed_step(built["model"], built)  # built and warmed before the profile starts
    ready.set()
    while not stop.is_set():
        recipes.timed_step(built["model"], built)
        with steps.get_lock():
            steps.value += 1


class CoRunners:
    """A context: `count` processes training the recipe at `path` until it exits; `steps` is then how
    many steps they trained, together, while it was open."""

    def __init__(self, path, count, threads, ready_timeout_s=600):
        self.path, self.count, self.threads, self.timeout = path, count, threads, ready_timeout_s
        self.procs, self.steps = [], 0

    def __enter__(self):
        if self.count == 0:
            return self
        ctx = multiprocessing.get_context("spawn")
        self.stop, self.counter = ctx.Event(), ctx.Value("q", 0)
        readies = []
        for _ in range(self.count):
            ready = ctx.Event()
            p = ctx.Process(target=_train, args=(self.path, self.threads, ready, self.stop, self.counter), daemon=True)
            p.start()
            self.procs.append(p)
            readies.append(ready)
        for p, ready in zip(self.procs, readies):
            waited = 0
            while not ready.wait(1) and p.is_alive() and waited < self.timeout:  # a co-runner that dies: at once
                waited += 1
            if not ready.is_set() or not p.is_alive():
                self.__exit__(None, None, None)
                raise recipes.RecipeError(f"{self.path}: a co-runner (--ranks-per-host) did not start training "
                                          f"(exit code {p.exitcode})")
        return self

    def __exit__(self, *_):
        if not self.procs:
            return False
        self.stop.set()
        self.steps = self.counter.value
        for p in self.procs:
            p.join(60)
            if p.is_alive():
                p.terminate()
                p.join()
        self.procs = []
        return False
