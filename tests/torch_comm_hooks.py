"""oracle.torch_comm_hooks: ddpsim's prediction of real DistributedDataParallel
under its communication hooks (PyTorch's own: allreduce_hook,
fp16_compress_hook, powerSGD_hook at rank 1 and 4) on an emulated 1 Gbit/s
network (docs/emulated-network.md), where compression matters.

One all-reduce sweep at W = 2 under the shaping; per recipe, two profiles
at W = 1 with --comm-hook (profiles(): the hook's own work timed there:
casts, passes, first touch of fresh tensors, matrix products, calls; the
collective section fitted to the sweep at DDP's buckets), each hook's
scenario from them; per hook, measure W = 2 under the shaping with the same
hook registered, predict with `ddpsim validate`. PowerSGD starts inside the
measured steps (start_powerSGD_iter = SWITCH), so a row's steps hold both
plain and compressed ones; each PowerSGD row is also validated on either
side of the switch ('before', 'after': the scenario's warm-up and
iterations cut there, the measured steps with them) and in its steady state
('steady': from STEADY steps past the switch).

The targets (docs/validation.md), printed as met or not:
- each hook's speed-up over allreduce (measured step / the hook's) predicted
  within 3 points, over all the measured steps and (PowerSGD) in steady state;
- predicted against measured step time, per row, beside the closed form.
The targets are measurements on this shared machine: reported, not gated.
Exits 1 on a broken pipeline (an error that is not a finite number) and,
with --max-error-pct, past it on any row but 'after'; 77 (ctest: skipped)
without torch or where a network namespace cannot be made.

Usage: torch_comm_hooks.py DDPSIM WORK_DIR [--recipes cnn,embedding] [--rate 1gbit] [--json OUT]
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_ddp  # noqa: E402  (tool, validate_row)
import torch_ddp_network as net  # noqa: E402  (network_allowed, gradient_bytes, sweep_at)

ROOT = torch_ddp.ROOT
# Measured steps a recipe, and the step PowerSGD starts at: a few plain
# steps after the two of warm-up, then compressed ones.
STEPS = {"cnn": 12, "embedding": 20, "mlp": 40, "transformer": 10}
SWITCH = {"cnn": 6, "embedding": 10, "mlp": 20, "transformer": 5}
# (label, hook, options, one bucket): PowerSGD on gloo needs every gradient in one
# bucket (hooks.check_one_bucket: with more, its callbacks race the backward
# thread for gloo's collective order), so its speed-up is over its own steps
# before the switch (allreduce on that one bucket, in the same processes);
# fp16_compress's over allreduce at DDP's default buckets.
HOOKS = [("allreduce", "allreduce", [], False), ("fp16_compress", "fp16_compress", [], False),
         ("powerSGD_r1", "powerSGD", ["matrix_approximation_rank=1"], True),
         ("powerSGD_r4", "powerSGD", ["matrix_approximation_rank=4"], True)]
ONE_BUCKET_MB = 4096  # past any recipe's gradient
# The first compressed steps cost more than the rest (Q drawn, the error buffer and P, Q created,
# first calls), and the other rank waits for them: 'steady' leaves out this many from the switch on.
STEADY = 2


def hook_args(hook, options, one_bucket, switch):
    extra = [f"start_powerSGD_iter={switch}"] if hook == "powerSGD" else []
    args = ["--comm-hook", hook]
    for o in options + extra:
        args += ["--hook-option", o]
    if one_bucket:
        args += ["--bucket-cap-mb", str(ONE_BUCKET_MB)]  # torch 2.3+: the cap given caps the first bucket too
    return args


def retrain(scenario, out, iterations, warmup):
    """The scenario with its training section's iterations and warm-up set (measured steps alike)."""
    text = open(scenario, encoding="utf-8").read()
    text = re.sub(r"(?m)^  iterations: \d+", f"  iterations: {iterations}", text)
    text = re.sub(r"(?m)^  warmup_iterations: \d+", f"  warmup_iterations: {warmup}", text)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return out


def without_hook(text):
    """A profile's scenario with its ddp.comm_hook block taken out: DDP without a hook."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("  comm_hook:"):
            inside = True
            continue
        if inside and line.startswith("    "):
            continue
        inside = False
        out.append(line)
    return "".join(out)


def profiles(a, name, sweep):
    """The scenario of every hook, from two profiles (each profile: the bare model, one-rank DDP, the hook's
    rates): fp16_compress at DDP's default buckets (allreduce: the same, its hook block out), and PowerSGD
    rank 4 on one bucket (allreduce_1bucket: its hook block out; rank 1: the rank edited, its matrix product
    rate the one timed at rank 4)."""
    recipe = os.path.join(ROOT, "python", "recipes", name + ".py")
    texts = {}
    for label, hook_name, options, one_bucket in (HOOKS[1], HOOKS[3]):
        path = os.path.join(a.work, f"{name}_{label}.yaml")
        torch_ddp.tool(["profile", recipe, "--out", path, "--world-size", "1,2", "--collective", sweep,
                        "--ranks-per-host", str(a.ranks_per_host)] + hook_args(hook_name, options, one_bucket, SWITCH[name]))
        texts[label] = open(path, encoding="utf-8").read()
    texts["allreduce"] = without_hook(texts["fp16_compress"])
    texts["powerSGD_r1"] = texts["powerSGD_r4"].replace("matrix_approximation_rank: 4", "matrix_approximation_rank: 1")
    paths = {}
    for label, text in texts.items():
        paths[label] = os.path.join(a.work, f"{name}_{label}.yaml")
        with open(paths[label], "w", encoding="utf-8") as f:
            f.write(text)
    return paths


def run_hook(a, name, label, hook_name, options, one_bucket, scenario):
    """{'all': row, 'before': row, 'after': row}: (measured, predicted, error %, closed-form error %)."""
    recipe = os.path.join(ROOT, "python", "recipes", name + ".py")
    steps, switch = STEPS[name], SWITCH[name]
    tag = f"{name}_{label}"
    prefix = os.path.join(a.work, f"{tag}_w2")
    hook = hook_args(hook_name, options, one_bucket, switch)
    torch_ddp.tool(["measure", recipe, "--world-size", "2", "--steps", str(steps), "--network", a.rate, "--out", prefix]
                   + hook)
    row = {"all": net.row_at(a, a.ddpsim, retrain(scenario, scenario, steps, 2), prefix)}
    if label.startswith("powerSGD"):
        before = retrain(scenario, os.path.join(a.work, f"{tag}_before.yaml"), switch, 2)
        link_before(prefix, switch)
        after = retrain(scenario, os.path.join(a.work, f"{tag}_after.yaml"), steps, switch)
        steady = retrain(scenario, os.path.join(a.work, f"{tag}_steady.yaml"), steps, switch + STEADY)
        row["before"] = net.row_at(a, a.ddpsim, before, prefix + "_before")
        row["after"] = net.row_at(a, a.ddpsim, after, prefix)
        row["steady"] = net.row_at(a, a.ddpsim, steady, prefix)
    return row


def link_before(prefix, switch):
    """The measured logs cut to the steps before the switch, as PREFIX_before.rank<r>.json."""
    for r in range(2):
        with open(f"{prefix}.rank{r}.json", encoding="utf-8") as f:
            log = json.load(f)
        log["steps"] = [s for s in log["steps"] if s["iteration"] < switch]
        with open(f"{prefix}_before.rank{r}.json", "w", encoding="utf-8") as f:
            json.dump(log, f)


def report(rows):
    """Print the rows and the speed-up targets; the rows' |errors|."""
    print(f"{'recipe':<10} {'hook':<14} {'steps':<7} {'measured_ms':>11} {'predicted_ms':>12} {'error':>8} "
          f"{'closed_form':>11}")
    errors = []
    for (name, label), row in rows.items():
        for part in ("all", "before", "after", "steady"):
            if part not in row:
                continue
            m, p, e, c = row[part]
            if part != "after":  # 'after' holds the first compressed steps' transient: reported, not bounded
                errors.append(abs(e))
            print(f"{name:<10} {label:<14} {part:<7} {m:>11.2f} {p:>12.2f} {e:>+7.1f}% {c:>+10.1f}%")
    for (name, label), row in rows.items():
        if label == "allreduce":
            continue
        # fp16_compress against allreduce's run; PowerSGD against its own steps before the switch.
        base = row["before"] if "before" in row else rows.get((name, "allreduce"), {}).get("all")
        for part in ("all", "steady"):
            if part not in row or not base:
                continue
            measured, predicted = base[0] / row[part][0], base[1] / row[part][1]
            points = (predicted - measured) * 100
            print(f"{name} {label} ({part}): speed-up over allreduce measured {measured:.3f}x, predicted "
                  f"{predicted:.3f}x ({points:+.1f} points; target within 3: "
                  f"{'met' if abs(points) <= 3 else 'not met'})")
    return errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ddpsim")
    parser.add_argument("work")
    parser.add_argument("--recipes", default="cnn,embedding")
    parser.add_argument("--rate", default="1gbit")
    parser.add_argument("--max-error-pct", type=float, default=None,
                        help="gate: fail when a row's |error| passes this (default: none, reported)")
    parser.add_argument("--ranks-per-host", type=int, default=1, help="profile --ranks-per-host")
    parser.add_argument("--json", help="write the rows here")
    a = parser.parse_args()
    a.ddpsim, a.world_size = os.path.abspath(a.ddpsim), 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIPPED: torch is not installed")
        return 77
    why = net.network_allowed()
    if why:
        print(f"SKIPPED: no emulated network here ({why})")
        return 77
    os.makedirs(a.work, exist_ok=True)
    start = time.monotonic()
    rows = {}
    names = a.recipes.split(",")
    # One sweep serves every recipe; up to the largest gradient (a power of two at least that): the fit is
    # taken at DDP's buckets, none larger than the gradient.
    largest = max(net.gradient_bytes(n) for n in names)
    sweep = net.sweep_at(a, a.rate, largest, os.path.join(a.work, f"sweep_{a.rate}.json"))
    for name in names:
        scenarios = profiles(a, name, sweep)
        for label, hook_name, options, one_bucket in HOOKS:
            rows[(name, label)] = run_hook(a, name, label, hook_name, options, one_bucket, scenarios[label])
            print(f"  {name} {label}: " + ", ".join(f"{k} measured {v[0]:.2f} predicted {v[1]:.2f} ({v[2]:+.1f} %)"
                                                     for k, v in rows[(name, label)].items()), flush=True)
    errors = report(rows)
    print(f"took {time.monotonic() - start:.0f} s")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump([{"recipe": n, "hook": h, **r} for (n, h), r in rows.items()], f, indent=1)
    if not all(math.isfinite(e) for e in errors):
        print(f"FAIL: an error that is not a finite number ({errors}): a broken pipeline")
        return 1
    worst = max(errors) if errors else 0
    if a.max_error_pct is not None and worst > a.max_error_pct:
        print(f"FAIL: a row's |error| {worst:.1f} % is past --max-error-pct {a.max_error_pct}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
