"""oracle.torch_cluster: ddpsim's prediction of real DistributedDataParallel (gloo, torch 2.x) on
emulated clusters of hosts (docs/emulated-network.md, "A cluster of hosts"), by the analytic engine,
the SimGrid engine and the closed form, each beside the measurement.

Layouts (each one `cluster:` description, used for the emulation and the prediction alike):
- one switch: hosts of one rank each behind RATE NICs, at W = 2, 4 and 8 (--sizes);
- two levels: 2 nodes x 4 hosts, unshaped veths inside a node, one UPLINK NIC a node.

Per recipe and row: an all-reduce sweep of W ranks on the row's layout (the only fitted number: each
link's latency, a ring step's fixed cost, from this sweep, with the bandwidth held at the description's;
never from the rows judged); a profile with --cluster, --collective SWEEP and --ranks-per-host W (the model's times measured on one
rank while W - 1 processes train beside it: the W ranks share this machine's two cores, and this is
what that costs their compute, measured apart from the rows judged); measure each row with `ddpsim
measure --cluster`; predict with `ddpsim validate` (the scenario's engine: analytic, then a copy with
`engine: simgrid`). Each row prints the measured compute beside the profiled one.

With the overlap micro-benchmark too (unless --no-overlap): `ddpsim overlap` on each row's layout and W
(compute and an all-reduce alone and at once, apart from the rows judged), its pair through `ddpsim
calibrate --overlap` into `validate --calibration`: the analytic and SimGrid predictions again with both
contention terms measured.

Two levels, also: G = 4 strided process groups ({0, 4}, ...) all-reducing 8 MiB at once across the
two nodes' NICs (tests/cluster_groups.py), against `ddpsim collectives --groups` on SimGrid and
against one group priced alone (an engine that does not see the shared NIC).

The targets (docs/validation.md), printed as met or not (measurements on a shared machine: reported,
not gated): median |error| at most 5 % over the rows and below the closed form's; on the two-level
row, SimGrid within 5 %. Exits 1 on a broken pipeline (an error that is not a finite number), 77
(ctest: skipped) without root or torch.

A slow NIC, also: W = 4 on one switch with rank 1's NIC at a quarter of its rate (--slow-rank 1:0.25),
predicted with a slow_link fault (factor 4); target 10 %.

Usage: torch_cluster.py DDPSIM WORK_DIR [--recipes cnn] [--rate 1gbit] [--uplink 200mbit] [--sizes 2,4,8]
       [--steps 12] [--no-two-level] [--no-slow-rank] [--no-overlap]
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


def validate(a, scenario, prefixes, extra=()):
    """{W: (measured, predicted, error %, closed-form error %, compute measured)} of `ddpsim validate`."""
    out = run([a.ddpsim, "validate", "--scenario", scenario, "--measured", *prefixes, *extra], "validate")
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) > 9 and f[0].isdigit() and f[1].replace(".", "", 1).isdigit():
            rows[int(f[0])] = (float(f[1]), float(f[3]), float(f[4].rstrip("%")), float(f[6].rstrip("%")),
                               f[7].split("/")[1])
    return rows


def slow_rank_row(a, name, recipe, work, one, scenario):
    """W = 4 on one switch with rank 1's NIC at a quarter of its rate (both ways), predicted with the
    scenario's slow_link fault (factor 4): a ring's slowest hop either way."""
    prefix = os.path.join(work, "one_w4_slow")
    run([a.ddpsim, "measure", recipe, "--world-size", "4", "--cluster", one, "--slow-rank", "1:0.25", "--steps",
         str(a.steps), "--out", prefix], "measure --slow-rank")
    faulted = scenario.replace(".yaml", "_slow.yaml")
    with open(faulted, "w", encoding="utf-8") as f:
        text = open(scenario, encoding="utf-8").read().replace("world_size: [1, 4]", "world_size: [4]")
        f.write(text + "faults:\n  - {type: slow_link, rank: 1, factor: 4}\n")
    analytic = validate(a, faulted, [prefix])[4]
    simgrid = validate(a, with_engine(faulted, "simgrid"), [prefix])[4]
    print(f"{name:10} slow NIC   W=4  measured {analytic[0]:9.1f} ms  analytic {analytic[1]:9.1f} ({analytic[2]:+6.1f} %)"
          f"  simgrid {simgrid[1]:9.1f} ({simgrid[2]:+6.1f} %)  closed form {analytic[3]:+6.1f} % (target 10 %: "
          f"{'met' if min(abs(analytic[2]), abs(simgrid[2])) <= 10 else 'not met'})", flush=True)
    return {"recipe": name, "layout": "slow NIC", "what": "rank 1 at a quarter", "W": 4, "measured": analytic[0],
            "analytic": analytic[1], "analytic_err": analytic[2], "simgrid": simgrid[1], "simgrid_err": simgrid[2],
            "closed_err": analytic[3], "compute": analytic[4]}


rows_groups = []


def overlap_calibration(a, work, key, w, described):
    """The overlap micro-benchmark on the row's layout and W, as a calibration (its contention: only); None
    with --no-overlap."""
    if not a.overlap:
        return None
    measured, out = os.path.join(work, f"overlap_{key}_w{w}.json"), os.path.join(work, f"overlap_{key}_w{w}.yaml")
    printed = run([a.ddpsim, "overlap", "--world-size", str(w), "--cluster", described, "--mb", "1", "25", "--reps", "3",
                   "--out", measured], "overlap")
    print(f"{key} W={w}: {printed.strip().splitlines()[-1]}", flush=True)
    run([a.ddpsim, "calibrate", "--overlap", measured, "--out", out], "calibrate --overlap")
    return out


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
    predicted = {}
    for key, described, w in [("one", one, w) for w in a.sizes] + ([("two", two, 8)] if two else []):
        # Each row's own sweep: W ranks on its layout (the only fitted number, each link's latency, from it,
        # the bandwidth held at the description's; never from the rows judged).
        sweep = os.path.join(work, f"sweep_{key}_w{w}.json")
        run([a.ddpsim, "sweep", "--world-size", str(w), "--cluster", described, "--max-bytes", str(32 << 20),
             "--min-bytes", str(64 << 10), "--iters", "3", "--out", sweep], "sweep")
        # The W ranks share this machine's cores: profiled with W - 1 processes training beside it
        # (--ranks-per-host W), a measurement of its own, not of the rows judged.
        out = os.path.join(work, f"profile_{key}_w{w}.yaml")
        run([a.ddpsim, "profile", recipe, "--cluster", described, "--collective", sweep, "--ranks-per-host", str(w),
             "--world-size", f"1,{w}", "--out", out], "profile")
        predicted[(key, w)] = (out, overlap_calibration(a, work, key, w, described))
    rows = []
    if two:
        rows_groups.append(groups_row(a, work, two, predicted[("two", 8)][0]))
    for layout, described, w, what in layouts:
        prefix = os.path.join(work, f"{'one' if described == one else 'two'}_w{w}")
        run([a.ddpsim, "measure", recipe, "--world-size", str(w), "--cluster", described, "--steps", str(a.steps),
             "--out", prefix], "measure")
        scenario, calibration = predicted[("one" if described == one else "two", w)]
        analytic = validate(a, scenario, [prefix])[w]
        simgrid = validate(a, with_engine(scenario, "simgrid"), [prefix])[w]
        rows.append({"recipe": name, "layout": layout, "what": what, "W": w, "measured": analytic[0],
                     "analytic": analytic[1], "analytic_err": analytic[2], "simgrid": simgrid[1],
                     "simgrid_err": simgrid[2], "closed_err": analytic[3], "compute": analytic[4]})
        r = rows[-1]
        print(f"{name:10} {layout:10} W={w}  measured {r['measured']:9.1f} ms  analytic {r['analytic']:9.1f} "
              f"({r['analytic_err']:+6.1f} %)  simgrid {r['simgrid']:9.1f} ({r['simgrid_err']:+6.1f} %)  closed form "
              f"{r['closed_err']:+6.1f} %  measured compute {r['compute']} ms", flush=True)
        if calibration:
            extra = ["--calibration", calibration]
            r["overlap_analytic_err"] = validate(a, scenario, [prefix], extra)[w][2]
            r["overlap_simgrid_err"] = validate(a, with_engine(scenario, "simgrid"), [prefix], extra)[w][2]
            print(f"{name:10} {layout:10} W={w}  with the measured overlap: analytic {r['overlap_analytic_err']:+6.1f} %"
                  f"  simgrid {r['overlap_simgrid_err']:+6.1f} %", flush=True)
    if a.slow_rank and 4 in a.sizes:
        rows.append(slow_rank_row(a, name, recipe, work, one, predicted[("one", 4)][0]))
    return rows


def groups_row(a, work, described, predicted, groups=4, nbytes=8 << 20):
    """G strided groups all-reducing at once across the two nodes' NICs (tests/cluster_groups.py), against
    `ddpsim collectives --groups` (SimGrid: together) and one group priced alone (what an engine that does
    not see the shared NIC gives)."""
    out = os.path.join(work, "groups.json")
    run([a.ddpsim, "network", "--cluster", described, "--", sys.executable,
         os.path.join(a.root, "tests", "cluster_groups.py"), "--groups", str(groups), "--bytes", str(nbytes),
         "--iters", "3", "--out", out], "groups")
    import json
    measured = json.load(open(out, encoding="utf-8"))
    table = run([a.ddpsim, "collectives", predicted, "--groups", str(groups), "--world-size", "8", "--sizes",
                 f"{nbytes}:{nbytes}"], "collectives --groups")
    row = [line.split() for line in table.splitlines() if line.split() and line.split()[0] == str(nbytes)][0]
    alone, together = float(row[1]), float(row[2])
    err = {k: (p / measured[f"{k}_us"] - 1) * 100 for k, p in (("alone", alone), ("together", together))}
    miss = (alone / measured["together_us"] - 1) * 100
    print(f"{groups} groups of 2 across 2 nodes' NICs, {nbytes >> 20} MiB all-reduce: alone measured "
          f"{measured['alone_us'] / 1e3:.1f} ms, predicted {alone / 1e3:.1f} ({err['alone']:+.1f} %); together measured "
          f"{measured['together_us'] / 1e3:.1f} ms, SimGrid {together / 1e3:.1f} ({err['together']:+.1f} %), priced "
          f"alone {alone / 1e3:.1f} ({miss:+.1f} %)", flush=True)
    return {"simgrid_err": err["together"], "alone_err": miss}


def report(all_rows):
    rows = [r for r in all_rows if r["layout"] != "slow NIC"]  # the slow NIC has its own target (10 %)

    def med(key):
        return statistics.median(abs(r[key]) for r in rows)
    broken = [r for r in all_rows if not all(math.isfinite(r[k]) for k in ("analytic_err", "simgrid_err", "closed_err"))]
    a, s, c = med("analytic_err"), med("simgrid_err"), med("closed_err")
    print(f"median |error| over {len(rows)} rows: analytic {a:.1f} %, simgrid {s:.1f} %, closed form {c:.1f} %")
    if all("overlap_analytic_err" in r for r in rows):
        oa, os_ = med("overlap_analytic_err"), med("overlap_simgrid_err")
        print(f"with the measured overlap: analytic {oa:.1f} %, simgrid {os_:.1f} % (target: "
              f"{'met' if min(oa, os_) <= 5 and min(oa, os_) < c else 'not met'})")
        broken += [r for r in rows if not all(math.isfinite(r[k]) for k in ("overlap_analytic_err", "overlap_simgrid_err"))]
    best = min(a, s)
    print(f"target (median <= 5 % and below the closed form's): {'met' if best <= 5 and best < c else 'not met'} "
          "(a measurement on a shared machine: reported, not gated)")
    for r in rows:
        if r["layout"] == "2 x 4":
            print(f"two levels, {r['recipe']}: simgrid {r['simgrid_err']:+.1f} % (target 5 %: "
                  f"{'met' if abs(r['simgrid_err']) <= 5 else 'not met'}), analytic {r['analytic_err']:+.1f} %")
    for g in rows_groups:
        print(f"two levels, groups sharing the NICs: SimGrid {g['simgrid_err']:+.1f} % (target 5 %: "
              f"{'met' if abs(g['simgrid_err']) <= 5 else 'not met'}), priced alone {g['alone_err']:+.1f} %")
        if not all(math.isfinite(g[k]) for k in g):
            broken.append(g)
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
    parser.add_argument("--no-overlap", dest="overlap", action="store_false",
                        help="leave out the overlap micro-benchmark and the predictions with its contention terms")
    parser.add_argument("--no-slow-rank", dest="slow_rank", action="store_false",
                        help="leave out the W = 4 row with rank 1's NIC at a quarter")
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
