"""Writes tiny_modules_kineto2x.json: tiny_kineto2x.json with the module spans
torch.profiler(with_stack=True) adds (python_function "nn.Module: Linear_0"
around each layer's forward op, "nn.Module: Sequential_0" around both). Hand-made, as no torch 2.x runs here; the
numbers validate/trace_import_test.cpp checks follow from the spans below.

Usage: python3 tests/traces/make_modules_trace.py (from the repository root)
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
doc = json.load(open(os.path.join(HERE, "tiny_kineto2x.json"), encoding="utf-8"))
events = []
for e in doc["traceEvents"]:
    if e.get("ph") == "X" and e["name"] == "aten::linear":
        first = e["args"]["Input Dims"][1] == [3, 4]
        if first:  # the model, a Sequential holding both: not a leaf
            events.append({"ph": "X", "cat": "python_function", "name": "nn.Module: Sequential_0", "pid": e["pid"],
                           "tid": e["tid"], "ts": e["ts"] - 8, "dur": 138, "args": {"Python id": 6}})
        # Linear_0 60 us around its 50 us op, Linear_1 50 us around its 40 us op.
        span = {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_%d" % (0 if first else 1),
                "pid": e["pid"], "tid": e["tid"], "ts": e["ts"] - 5, "dur": 60 if first else 50,
                "args": {"Python id": 7 if first else 8, "Python parent id": 6}}
        events.append(span)
    events.append(e)
doc["traceEvents"] = events
with open(os.path.join(HERE, "tiny_modules_kineto2x.json"), "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
