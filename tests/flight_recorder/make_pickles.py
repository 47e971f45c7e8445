#!/usr/bin/python3
"""Writes tests/flight_recorder/pickle/: the tutorial's dumps (tutorial/) as
pickles, the default form of PyTorch's flight recorder. Rank 0 in protocol
2 (what torch's C++ pickler writes), with its shapes as torch writes typed
int lists (GLOBAL torch.jit._pickle build_intlist, REDUCE); rank 1 in
protocol 5 (Python's). Standard library only:

    command -p python3 tests/flight_recorder/make_pickles.py
"""
import json
import os
import pickle
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# A stand-in for torch.jit._pickle.build_intlist, so that pickle names it.
module = types.ModuleType("torch.jit._pickle")
sys.modules["torch"] = types.ModuleType("torch")
sys.modules["torch.jit"] = types.ModuleType("torch.jit")
sys.modules["torch.jit._pickle"] = module


def build_intlist(values):
    return values


build_intlist.__module__ = "torch.jit._pickle"
module.build_intlist = build_intlist


class IntList(list):
    def __reduce__(self):
        return (build_intlist, (list(self),))


def as_torch(dump):
    for e in dump["entries"]:
        e["process_group"] = tuple(e["process_group"])
        for key in ("input_sizes", "output_sizes"):
            e[key] = [IntList(shape) for shape in e[key]]
    return dump


for rank, protocol in ((0, 2), (1, 5)):
    with open(os.path.join(HERE, "tutorial", f"nccl_trace_rank_{rank}")) as f:
        dump = json.load(f)
    if rank == 0:
        dump = as_torch(dump)
    with open(os.path.join(HERE, "pickle", f"nccl_trace_rank_{rank}"), "wb") as f:
        pickle.dump(dump, f, protocol=protocol)
