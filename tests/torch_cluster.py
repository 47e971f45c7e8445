"""oracle.torch_cluster: ddpsim's prediction of real DistributedDataParallel (gloo, torch 2.x) on
emulated clusters of hosts (docs/emulated-network.md, "A cluster of hosts"), by the analytic engine,
the SimGrid engine and the closed form, each beside the measurement.

Layouts (each one `cluster:` description, used for the emulation and the prediction alike):
- one switch: hosts of one rank each behind RATE NICs, at W = 2, 4 and 8 (--sizes);
- two levels: 2 nodes x 4 hosts, unshaped veths inside a node, one UPLINK NIC a node.

Per recipe: an all-reduce sweep at W = 2 on the one-switch layout (the only fitted number: each link's
latency, a ring step's fixed cost, from this sweep; never from the rows judged); profile at W = 1
with --cluster and --collective SWEEP (the model's times measured alone on this machine); measure each
row with `ddpsim measure --cluster`; predict with `ddpsim validate` (the scenario's engine: analytic,
then a copy with `engine: simgrid`).

Eight ranks share this machine's two cores: the measured compute beside the profiled one is printed
(the contention), and the rates are set so that the network sets the step.

The targets (docs/validation.md), printed as met or not (measurements on a shared machine: reported,
not gated): median |error| at most 5 % over the rows and below the closed form's; on the two-level
row, SimGrid within 5 %. Exits 1 on a broken pipeline (an error that is not a finite number), 77
(ctest: skipped) without root or torch.

Usage: torch_cluster.py DDPSIM WORK_DIR [--recipes cnn] [--rate 1gbit] [--uplink 200mbit] [--sizes 2,4,8]
       [--steps 12] [--no-two-level]
"""
import argparse
import math
import os
import statistics
import subprocess
import sys

RATES = {"mbit": 1e6, "gbit": 1e9}
SCENARIO = """name: {name}
world_size: [{sizes}]
model: {{preset: resnet18, forward_ms: 1, backward_ms: 1}}   # only the cluster: section is read
cluster:
  nodes: {nodes}
  gpus_per_node: {gpus}
  intra: {{bandwidth_GBps: {intra:.6g}, latency_us: 50}}
  inter: {{topology: star, bandwidth_GBps: {inter:.6g}, latency_us: 50, duplex: full}}
"""


def gbps(rate):
    for unit, scale in RATES.items():
        if rate.endswith(unit):
            return float(rate[:-len(unit)]) * scale / 8e9
    raise SystemExit(f"{rate}: expected a rate such as 1gbit or 200mbit")


def run(cmd, what):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done.stdout


def describe(work, name, nodes, gpus, intra, inter, sizes):
    path = os.path.join(work, f"{name}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCENARIO.format(name=name, sizes=", ".join(map(str, sizes)), nodes=nodes, gpus=gpus, intra=intra,
                                inter=inter))
    return path


def with_engine(scenario, engine):
    out = scenario.replace(".yaml", f"_{engine}.yaml")
    with open(out, "w", encoding="utf-8") as f:
        f.write(open(scenario, encoding="utf-8").read() + f"engine: {engine}\n")
    return out


def validate(a, scenario, prefixes):
    """{W: (measured, predicted, error %, closed-form error %, compute measured)} of `ddpsim validate`."""
    out = run([a.ddpsim, "validate", "--scenario", scenario, "--measured", *prefixes], "validate")
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) > 9 and f[0].isdigit() and f[1].replace(".", "", 1).isdigit():
            rows[int(f[0])] = (float(f[1]), float(f[3]), float(f[4].rstrip("%")), float(f[6].rstrip("%")),
                               f[7].split("/")[1])
    return rows


def recipe_rows(a, name):
    recipe = os.path.join(a.root, "python", "recipes", f"{name}.py")
    work = os.path.join(a.work, name)
    os.makedirs(work, exist_ok=True)
    one = describe(work, "one_switch", max(a.sizes), 1, 100, gbps(a.rate), a.sizes)
    layouts = [("one switch", one, w, f"{a.rate} NICs") for w in a.sizes]
    two = None
    if a.two_level:
        two = describe(work, "two_level", 2, 4, 1.5, gbps(a.uplink), [8])
        layouts.append(("2 x 4", two, 8, f"{a.uplink} uplink a node"))
    sweep = os.path.join(work, "sweep.json")
    run([a.ddpsim, "sweep", "--world-size", "2", "--cluster", one, "--max-bytes", str(32 << 20), "--min-bytes",
         str(64 << 10), "--iters", "3", "--out", sweep], "sweep")
    predicted = {}
    for key, described in (("one", one), ("two", two)):
        if described:
            out = os.path.join(work, f"profile_{key}.yaml")
            run([a.ddpsim, "profile", recipe, "--cluster", described, "--collective", sweep, "--world-size",
                 ",".join(map(str, [1] + (a.sizes if key == "one" else [8]))), "--out", out], "profile")
            predicted[key] = out
    rows = []
    for layout, described, w, what in layouts:
        prefix = os.path.join(work, f"{'one' if described == one else 'two'}_w{w}")
        run([a.ddpsim, "measure", recipe, "--world-size", str(w), "--cluster", described, "--steps", str(a.steps),
             "--out", prefix], "measure")
        scenario = predicted["one" if described == one else "two"]
        analytic = validate(a, scenario, [prefix])[w]
        simgrid = validate(a, with_engine(scenario, "simgrid"), [prefix])[w]
        rows.append({"recipe": name, "layout": layout, "what": what, "W": w, "measured": analytic[0],
                     "analytic": analytic[1], "analytic_err": analytic[2], "simgrid": simgrid[1],
                     "simgrid_err": simgrid[2], "closed_err": analytic[3], "compute": analytic[4]})
        r = rows[-1]
        print(f"{name:10} {layout:10} W={w}  measured {r['measured']:9.1f} ms  analytic {r['analytic']:9.1f} "
              f"({r['analytic_err']:+6.1f} %)  simgrid {r['simgrid']:9.1f} ({r['simgrid_err']:+6.1f} %)  closed form "
              f"{r['closed_err']:+6.1f} %  measured compute {r['compute']} ms", flush=True)
    return rows


def report(rows):
    def med(key):
        return statistics.median(abs(r[key]) for r in rows)
    broken = [r for r in rows if not all(math.isfinite(r[k]) for k in ("analytic_err", "simgrid_err", "closed_err"))]
    a, s, c = med("analytic_err"), med("simgrid_err"), med("closed_err")
    print(f"median |error| over {len(rows)} rows: analytic {a:.1f} %, simgrid {s:.1f} %, closed form {c:.1f} %")
    best = min(a, s)
    print(f"target (median <= 5 % and below the closed form's): {'met' if best <= 5 and best < c else 'not met'} "
          "(a measurement on a shared machine: reported, not gated)")
    for r in rows:
        if r["layout"] == "2 x 4":
            print(f"two levels, {r['recipe']}: simgrid {r['simgrid_err']:+.1f} % (target 5 %: "
                  f"{'met' if abs(r['simgrid_err']) <= 5 else 'not met'}), analytic {r['analytic_err']:+.1f} %")
    return 1 if broken else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ddpsim")
    parser.add_argument("work")
    parser.add_argument("--recipes", default="cnn")
    parser.add_argument("--rate", default="1gbit")
    parser.add_argument("--uplink", default="200mbit")
    parser.add_argument("--sizes", default="2,4,8")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--no-two-level", dest="two_level", action="store_false")
    a = parser.parse_args()
    a.sizes = [int(w) for w in a.sizes.split(",")]
    a.root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.geteuid() != 0:
        print("SKIPPED: the emulated cluster needs root")
        return 77
    rows = []
    for name in a.recipes.split(","):
        rows += recipe_rows(a, name)
    return report(rows)


if __name__ == "__main__":
    sys.exit(main())
