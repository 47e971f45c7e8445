"""python.fit: profile --collective's fit at the job's buckets (python/ddpsim_torch/fit.py), on a real gloo
sweep at W = 2 over a 1 Gbit/s emulated link (tests/measured/torch_sweep_1gbit_w2.json) and ResNet-18's
three buckets from the same session. No torch needed.

- At the buckets, the fitted line gives each bucket's time within 1 % of the sweep's own (interpolated);
  a line through all ten sizes misses their sum by more than 5 % (331 ms against 362: the defect the fit at
  the buckets mends).
- One bucket size: the sweep's sizes around it; a noisy neighbourhood (no positive time per byte): all sizes,
  and the notes say so.
Usage: fit_test.py   (exit 0: all passed)
"""
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ddpsim_torch import fit  # noqa: E402

SWEEP = os.path.join(ROOT, "tests", "measured", "torch_sweep_1gbit_w2.json")
BUCKETS = [9461800, 26494976, 8769792]  # ResNet-18's rebuilt buckets (measure's log, 25 MB cap)
failures = []


def expect(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if not ok else ""))
    if not ok:
        failures.append(what)


def line_us(f, b, w=2):
    return f["launch_overhead_us"] + 2 * (w - 1) * f["latency_us"] + 2 * (w - 1) / w * b / (f["bandwidth_GBps"] * 1e3)


def main():
    rows = json.load(open(SWEEP, encoding="utf-8"))["sweep"]
    pts = [(2, r["bytes"], r["time_us"]) for r in rows]
    at, _ = fit.at_buckets(pts, BUCKETS)
    own = {b: t for _, b, t in at}
    fitted = fit.fit_sweep(SWEEP, BUCKETS)
    for b in BUCKETS:
        expect(f"the line at the {b}-byte bucket is within 1 % of the sweep's time",
               abs(line_us(fitted, b) / own[b] - 1) <= 0.01, f"{line_us(fitted, b):.0f} against {own[b]:.0f} us")
    expect("the notes say the fit was at the buckets", any("at DDP's 3 buckets" in n for n in fitted["notes"]),
           str(fitted["notes"]))
    everything = fit.fit_sweep(SWEEP)
    total, wrong = sum(own.values()), sum(line_us(everything, b) for b in BUCKETS)
    expect("a line through every size misses the buckets' sum by over 5 %", wrong / total - 1 < -0.05,
           f"{wrong / 1e3:.1f} against {total / 1e3:.1f} ms")
    one = fit.fit_sweep(SWEEP, [340008])
    expect("one bucket size: the three sizes nearest it", any("nearest the range" in n for n in one["notes"]),
           str(one["notes"]))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        noisy = [{"bytes": b, "time_us": t} for b, t in [(65536, 9087), (131072, 7184), (262144, 7319),
                                                          (524288, 6540), (1048576, 12344)]]
        json.dump({"world_size": 4, "sweep": noisy}, f)  # a W = 4 sweep on two cores
    falls_back = fit.fit_sweep(f.name, [340008])
    os.unlink(f.name)
    expect("a noisy neighbourhood: all sizes fitted, and said", falls_back["bandwidth_GBps"] > 0 and any(
        "so all 5 sizes fitted" in n for n in falls_back["notes"]), str(falls_back["notes"]))
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
