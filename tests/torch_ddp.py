"""oracle.torch_ddp: ddpsim's prediction of real DistributedDataParallel.

For each recipe (an MLP, torchvision's ResNet-18, a transformer encoder, an
embedding-dominated model): profile it alone on one rank (--ranks-per-host 2
profiles it with a second process training beside it), predict two ranks with
the collective fitted to a 2-rank gloo sweep, and measure two ranks under
real DDP (gloo, one thread per rank). contention.compute_slowdown is fitted
by `ddpsim calibrate --scenario` to one recipe's 2-rank run (--calibrate-on,
default cnn; that row is in-sample) and applied to the others. Beside it, contention
measured apart from every recipe (`python3 -m ddpsim_torch overlap`: compute and an
all-reduce alone and at once, both slowdowns; `ddpsim calibrate --overlap`), which
leaves every row out of sample. Profiles and measurements are
interleaved recipe by recipe so the machine's drift hits both. Prints, per
recipe, measured, predicted and the error beside the closed form's, and the
target (median |error| at most 5 % and below the closed form) judged on the
out-of-sample recipes only. On this shared 2-core machine that is a
measurement, reported, not gated: the script fails on a broken pipeline (a
time that is not a positive finite number), and with --max-error-pct on an
out-of-sample row past it.

Usage: torch_ddp.py DDPSIM WORK_DIR [--recipes a,b] [--calibrate-on r] [--max-error-pct P]
Exits 77 (ctest: skipped) without torch.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPES = ["mlp", "cnn", "transformer", "embedding"]
# Measured steps a recipe: the quick ones longer, so the mean of a step that
# spikes to 3 x on this shared machine moves less (about 3 s each).
STEPS = {"mlp": 120, "cnn": 30, "transformer": 8, "embedding": 60}


# glibc serves the buffers of DDP's 25 MiB buckets and the gradients by mmap
# and, its threshold moving with the history of frees, sometimes returns them
# to the kernel each step: every step then faults them in again, and the same
# run takes 25 or 130 ms a backward (ResNet-18 here). Fixed thresholds keep
# the heap: profile and measure, the predicted and the real job, run alike.
STABLE_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def tool(args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), **STABLE_MALLOC)
    subprocess.run([sys.executable, "-m", "ddpsim_torch"] + args, check=True, env=env, stdout=subprocess.DEVNULL)


def validate_row(ddpsim, scenario, prefix, extra=(), world=2, show_order=True):
    """(measured, predicted, error %, closed-form error %) of the W = `world` row of `ddpsim validate`."""
    out = subprocess.run([ddpsim, "validate", "--scenario", scenario, "--measured", prefix] + list(extra), check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("ready order:") and not extra and show_order:
            print(line)  # whether real DDP's order is the profiled one
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == str(world):
            return float(f[1]), float(f[3]), float(f[4].rstrip("%")), float(f[6].rstrip("%"))
    raise SystemExit(f"no W = {world} row in ddpsim validate's output:\n{out}")


def contention_of(calibration):
    """contention.compute_slowdown from a calibration file ddpsim calibrate wrote."""
    lines = open(calibration, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        if line == "contention:" and i + 1 < len(lines) and "compute_slowdown:" in lines[i + 1]:
            return float(lines[i + 1].split(":")[1])
    raise SystemExit(f"{calibration}: no contention section")


def with_contention(scenario, slowdown):
    """A copy of the scenario with contention.compute_slowdown set."""
    out = scenario.replace(".yaml", "_contention.yaml")
    with open(out, "w", encoding="utf-8") as f:
        f.write(open(scenario, encoding="utf-8").read() + f"contention: {{compute_slowdown: {slowdown:.6g}}}\n")
    return out


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ddpsim")
    parser.add_argument("work")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--calibrate-on", default="cnn", help="the recipe contention is fitted to")
    parser.add_argument("--max-error-pct", type=float, default=None,
                        help="gate: fail when an out-of-sample recipe's |error| passes this (default: none, reported)")
    parser.add_argument("--steps", type=int, default=0, help="measured steps a recipe (default: STEPS)")
    parser.add_argument("--sweep-iters", type=int, default=20, help="timed all-reduces a size in the sweep")
    parser.add_argument("--ranks-per-host", type=int, default=1,
                        help="profile --ranks-per-host: 1 (default) profiles alone; 2 with a second process "
                             "training beside it, as the W = 2 job shares this host (docs/validation.md: no "
                             "difference above this machine's drift)")
    a = parser.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIPPED: torch is not installed")
        return 77
    os.makedirs(a.work, exist_ok=True)
    start = time.monotonic()
    sweep = os.path.join(a.work, "sweep_w2.json")
    # The sizes DDP's buckets have here (340 KB to 29 MB): below 64 KiB a gloo call on this machine is
    # scheduling noise (0.4 to 4 ms), which the fit's relative errors would weigh as much as the buckets.
    tool(["sweep", "--world-size", "2", "--min-bytes", str(64 << 10), "--max-bytes", str(32 << 20),
          "--iters", str(a.sweep_iters), "--out", sweep])
    # The overlap micro-benchmark, before any recipe runs and apart from them all.
    overlap_json, overlap_cal = os.path.join(a.work, "overlap.json"), os.path.join(a.work, "overlap_calibration.yaml")
    tool(["overlap", "--world-size", "2", "--out", overlap_json])
    subprocess.run([a.ddpsim, "calibrate", "--overlap", overlap_json, "--out", overlap_cal], check=True,
                   stdout=subprocess.DEVNULL)
    names = a.recipes.split(",")
    runs = {name: profile_and_measure(a, name, sweep) for name in names}
    overlap_rows(a, names, runs, overlap_cal)
    rows = evaluate(a, names, runs)
    failure = check(a, rows)
    print(f"took {time.monotonic() - start:.0f} s")
    if failure:
        print(f"FAIL: {failure}")
        return 1
    return 0


def profile_and_measure(a, name, sweep):
    """Profile one recipe at W = 1 and measure it at W = 2: (scenario, log prefix)."""
    recipe = os.path.join(ROOT, "python", "recipes", name + ".py")
    scenario, prefix = os.path.join(a.work, name + ".yaml"), os.path.join(a.work, name + "_w2")
    tool(["profile", recipe, "--out", scenario, "--world-size", "1,2", "--collective", sweep,
          "--ranks-per-host", str(a.ranks_per_host)])
    tool(["measure", recipe, "--world-size", "2", "--steps", str(a.steps or STEPS.get(name, 14)), "--out", prefix])
    return scenario, prefix


def evaluate(a, names, runs):
    """Fit contention to the calibration recipe, predict every recipe, print the table; the rows."""
    # Contention fitted to one recipe's 2-rank run (with its arrival skew), applied to the others.
    scenario, prefix = runs[a.calibrate_on]
    calibration = os.path.join(a.work, a.calibrate_on + "_calibration.yaml")
    subprocess.run([a.ddpsim, "calibrate", "--measured", prefix + ".rank0.json", "--scenario", scenario,
                    "--out", calibration], check=True, stdout=subprocess.DEVNULL)
    slowdown = contention_of(calibration)
    rows = []
    for name in names:
        scenario, prefix = runs[name]
        measured, bare, err_bare, base = validate_row(a.ddpsim, scenario, prefix)
        if name == a.calibrate_on:
            _, predicted, err, _ = validate_row(a.ddpsim, scenario, prefix, ["--calibration", calibration])
        else:
            _, predicted, err, _ = validate_row(a.ddpsim, with_contention(scenario, slowdown), prefix)
        rows.append((name, measured, bare, err_bare, predicted, err, base))
    print(f"contention.compute_slowdown {slowdown:.4g}, fitted to {a.calibrate_on} (its row is in-sample)")
    print(f"{'recipe':<12} {'measured_ms':>11} {'no_contention':>13} {'error':>8} {'predicted_ms':>12} {'error':>8} "
          f"{'closed_form':>11}")
    for name, measured, bare, err_bare, predicted, err, base in rows:
        print(f"{name:<12} {measured:>11.3f} {bare:>13.3f} {err_bare:>+7.1f}% {predicted:>12.3f} {err:>+7.1f}% "
              f"{base:>+10.1f}%" + ("  (calibration)" if name == a.calibrate_on else ""))
    # The target is judged out of sample only: the calibration recipe's row was fitted to its own measurement.
    held = [r for r in rows if r[0] != a.calibrate_on]
    if not held:
        print(f"no recipe out of sample: the target (median |error| at most 5 % and below the closed form) is not "
              f"judged; {a.calibrate_on}'s row is the fit's own (in-sample)")
        return rows
    med, base_med = median([abs(r[5]) for r in held]), median([abs(r[6]) for r in held])
    print(f"out of sample ({len(held)} recipe(s)): median |error| simulator {med:.1f} %, closed form {base_med:.1f} % "
          f"(target: at most 5 % and below the closed form: {'met' if med <= 5 and med < base_med else 'not met'}; "
          f"a measurement on this shared machine: reported, not gated)")
    return rows


def overlap_rows(a, names, runs, calibration):
    """Every recipe predicted with the overlap micro-benchmark's contention (both slowdowns): all out of sample."""
    text = open(calibration, encoding="utf-8").read()
    pair = [line.strip() for line in text.splitlines() if line.strip().startswith(("compute_slowdown", "comm_slowdown"))]
    print(f"contention measured by the overlap micro-benchmark: {', '.join(pair)}")
    print(f"{'recipe':<12} {'measured_ms':>11} {'predicted_ms':>12} {'error':>8} {'closed_form':>11}")
    errors, bases = [], []
    for name in names:
        scenario, prefix = runs[name]
        measured, predicted, err, base = validate_row(a.ddpsim, scenario, prefix, ["--calibration", calibration])
        errors.append(abs(err))
        bases.append(abs(base))
        print(f"{name:<12} {measured:>11.3f} {predicted:>12.3f} {err:>+7.1f}% {base:>+10.1f}%")
    med, base_med = median(errors), median(bases)
    print(f"overlap-measured contention, out of sample ({len(names)} recipe(s)): median |error| simulator {med:.1f} %, "
          f"closed form {base_med:.1f} % (target: at most 5 % and below the closed form: "
          f"{'met' if med <= 5 and med < base_med else 'not met'}; reported, not gated)")
    failure = gate(a, errors) or (None if all(math.isfinite(b) for b in bases) else f"closed form errors {bases}")
    if failure:
        raise SystemExit(f"FAIL: overlap rows: {failure}")


def gate(a, magnitudes):
    """A broken pipeline (an error that is not a finite number), or with --max-error-pct a row past it; or None.
    Without --max-error-pct the errors are measurements: reported, not gated."""
    if not all(math.isfinite(m) for m in magnitudes):
        return f"an error that is not a finite number ({magnitudes})"
    if a.max_error_pct is not None and magnitudes and max(magnitudes) > a.max_error_pct:
        return f"an error of {max(magnitudes):.1f} % is past {a.max_error_pct} %"
    return None


def check(a, rows):
    """A broken pipeline (a time that is not a positive finite number), or with --max-error-pct an
    out-of-sample row past it; or None."""
    for name, measured, bare, _, predicted, err, base in rows:
        if not all(math.isfinite(v) and v > 0 for v in (measured, bare, predicted)) or not math.isfinite(err + base):
            return f"{name}: a time that is not a positive finite number (measured {measured}, predicted {predicted})"
    held = [abs(r[5]) for r in rows if r[0] != a.calibrate_on]
    if a.max_error_pct is not None and held and max(held) > a.max_error_pct:
        return f"an out-of-sample error of {max(held):.1f} % is past {a.max_error_pct} %"
    return None

if __name__ == "__main__":
    sys.exit(main())
