"""oracle.torch_import_trace: `ddpsim import-trace` on traces the pinned torch.profiler writes in the test
itself (tests/traces/make_trace.py on python/recipes/mlp.py, CPU): with a schedule (ProfilerStep#N), plain
under DistributedDataParallel, plain on the bare model (its nn.Module spans), and without record_shapes.
Each must import into tests/traces/mlp.yaml with the expected step markers and ready order, and the
scenario written must pass `ddpsim check`.

Exits 77 (ctest: skipped) without torch.
Usage: torch_import_trace.py DDPSIM_BINARY WORK_DIR
"""
import os
import re
import subprocess
import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIPPED: torch is not installed ({e})")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASES = [  # make_trace.py flags, the step markers import-trace must use, the ready order's source
    (["--schedule"], "ProfilerStep#N", "the AccumulateGrad shapes agree with the scenario's"),
    ([], "DistributedDataParallel.forward", "the AccumulateGrad shapes agree with the scenario's"),
    (["--bare"], "nn.Module: Sequential_0", "the AccumulateGrad shapes agree with the scenario's"),
    (["--no-shapes"], "DistributedDataParallel.forward", "the scenario's (the trace records no shapes)"),
]


def main():
    ddpsim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    recipe = os.path.join(ROOT, "python", "recipes", "mlp.py")
    scenario = os.path.join(ROOT, "tests", "traces", "mlp.yaml")
    failures = 0
    for flags, marker, order in CASES:
        name = "mlp" + "".join(f.replace("--", "_") for f in flags)
        trace, out = os.path.join(work, name + ".json"), os.path.join(work, name + ".yaml")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "traces", "make_trace.py"), recipe, trace] + flags,
                       check=True, capture_output=True)
        done = subprocess.run([ddpsim, "import-trace", trace, "--scenario", scenario, "--out", out],
                              capture_output=True, text=True)
        said = (done.stdout + done.stderr).strip()
        ok = done.returncode == 0 and f"(kineto format), 2 step(s) by {marker}:" in said and ", 6 gradients" in said
        if ok:
            with open(out) as f:
                written = f.read()
            ok = f"gradient-ready order: {order}" in written
            ok = ok and subprocess.run([ddpsim, "check", out], capture_output=True).returncode == 0
            times = re.search(r"forward ([0-9.]+) ms, backward ([0-9.]+) ms, optimizer ([0-9.]+) ms", said)
            ok = ok and times is not None and all(float(t) > 0 for t in times.groups())
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} make_trace.py {' '.join(flags) or '(plain, DDP)'}: {said}")
    print(f"{len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
