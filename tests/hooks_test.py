"""python.hooks: the comm hook side of ddpsim_torch (python/ddpsim_torch/hooks.py). No torch needed.

- --comm-hook and --hook-option are checked before any rank starts: an unknown hook or option, a
  PowerSGDState option on another hook, bf16_compress on gloo (gloo cannot all-reduce bfloat16).
- PowerSGD on gloo is refused unless every gradient fits one bucket (its callbacks race gloo's order).
- The matrices timed for PowerSGD are the ones powerSGD_hook compresses (_should_compress), checked
  against ddpsim's own choice: the scenario block scenario_lines() writes loads in `ddpsim run`, whose
  comm_hook JSON all-reduces P and Q of exactly those shapes.
- The matrix-product rate fitted by bisection reproduces the measured time through the model's roofline.
Usage: hooks_test.py DDPSIM   (exit 0: all passed)
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ddpsim_torch import hooks  # noqa: E402

failures = []


def expect(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if not ok else ""))
    if not ok:
        failures.append(what)


def refused(fn, *args):
    try:
        fn(*args)
    except hooks.HookError as e:
        return str(e)
    return None


def main():
    ddpsim = sys.argv[1]
    expect("an unknown hook is refused", "expected one of" in (refused(hooks.parse_options, "fp8", [], "gloo") or ""))
    expect("bf16_compress on gloo is refused, with the reason",
           "gloo cannot all-reduce bfloat16" in (refused(hooks.parse_options, "bf16_compress", [], "gloo") or ""))
    expect("bf16_compress on nccl is taken", refused(hooks.parse_options, "bf16_compress", [], "nccl") is None)
    expect("a PowerSGDState option on fp16_compress is refused",
           "a PowerSGDState option" in (refused(hooks.parse_options, "fp16_compress", ["warm_start=false"], "gloo") or ""))
    expect("an unknown option is refused",
           "KEY one of" in (refused(hooks.parse_options, "powerSGD", ["rank=4"], "gloo") or ""))
    expect("a bad value is refused", "expected an integer" in
           (refused(hooks.parse_options, "powerSGD", ["matrix_approximation_rank=four"], "gloo") or ""))
    opts = hooks.parse_options("powerSGD", ["matrix_approximation_rank=4", "use_error_feedback=false"], "gloo")
    expect("options are typed", opts == {"matrix_approximation_rank": 4, "use_error_feedback": False}, str(opts))
    expect("PowerSGD on gloo with two buckets is refused",
           "needs one bucket" in (refused(hooks.check_one_bucket, 100 << 20, 25, 1) or ""))
    expect("PowerSGD on gloo with one bucket is taken", refused(hooks.check_one_bucket, 100 << 20, 4096, 4096) is None)

    params = [(64, 32, 3, 3), (64,), (10, 64), (10,), (500, 8)]
    shapes = hooks._matrices(params, 4, 2)
    # (64, 288, 4): 352 x 4 x 2 < 18432; (10, 64, 4): 74 x 4 x 2 = 592 < 640; (500, 8, 4): 508 x 4 x 2 > 4000.
    expect("_matrices: powerSGD_hook's choice", shapes == [(64, 288, 4), (10, 64, 4)], str(shapes))
    lines = hooks.scenario_lines("powerSGD", {"matrix_approximation_rank": 4, "start_powerSGD_iter": 2},
                                 {"op_us": 3, "pass_GBps": 10, "alloc_GBps": 1, "matmul_GFLOPs": 5}, ["timed here"])
    text = "\n".join([
        "world_size: 2", "training: {iterations: 4, warmup_iterations: 2}",
        "collective: {backend: gloo, latency_us: 50, bandwidth_GBps: 0.125}",
        "model:", "  parameters:",
        "    - {name: conv, shape: [64, 32, 3, 3]}", "    - {name: bias, shape: [64]}",
        "    - {name: fc, shape: [10, 64]}", "    - {name: fcb, shape: [10]}", "    - {name: tall, shape: [500, 8]}",
        "  forward_ms: 1", "  backward_ms: 2", "ddp:"] + lines) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.yaml")
        open(path, "w", encoding="utf-8").write(text)
        run = subprocess.run([ddpsim, "run", path, "--json", os.path.join(tmp, "s.json")], capture_output=True, text=True)
        expect("scenario_lines' block loads in ddpsim run", run.returncode == 0, run.stderr)
        if run.returncode == 0:
            hook = json.load(open(os.path.join(tmp, "s.json")))["runs"][0]["comm_hook"]
            p_q = sum(n * r + m * r for n, m, r in shapes) * 4
            bias_tall = (64 + 10 + 500 * 8) * 4
            expect("ddpsim compresses the same matrices", hook["wire_bytes_per_step"] == p_q + bias_tall,
                   f"{hook['wire_bytes_per_step']} against {p_q + bias_tall}")
            expect("the rates are the block's", hook["rates"]["matmul_GFLOPs"] == 5 and hook["rates"]["measured"])

    measured = 1e6  # ns
    rate = hooks._matmul_rate(measured, shapes, 10e9, 3000)
    modelled = sum(max(2 * n * m * r / rate, 4 * n * m / 10e9) * 1e9 + 3000 for n, m, r in shapes)
    expect("the fitted flop rate reproduces the measured products", abs(modelled - measured) < 1, f"{modelled}")
    expect("products faster than the passes allow: no flop rate", hooks._matmul_rate(1, shapes, 10e9, 3000) is None)
    print("all passed" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
