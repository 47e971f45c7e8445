"""The collective fit of `ddpsim calibrate` (validate/calibrate.cpp:
fit_collective), for `profile --collective`: an all-reduce of b bytes on W
ranks takes launch + 2(W-1) latency + 2(W-1)/W b / bandwidth, fitted by least
squares on relative error. A parameter that comes out negative is fixed at 0
and the rest refitted; with one world size above 1 the launch overhead
cannot be told from the latency and is fixed at 0. tests/torch_ddp.py checks
that this fit and ddpsim calibrate's agree on the same sweep.

Given the job's bucket sizes (profile: the buckets one-rank DDP rebuilt),
the line is fitted to the sweep's time at each bucket (interpolated
between the sweep's neighbouring sizes; a bucket one point): the time of a
gloo call over TCP is not a line in its size from 64 KiB to 32 MiB, and a
line fitted to all of it misprices the sizes the job sends (on a 1 Gbit/s
link, ResNet-18's buckets at 331 ms where the sweep's own points give 362:
docs/validation.md, "On an emulated network"). Buckets of one size (a line
through one point is not determined) take the sweep's sizes from half the
bucket to twice it, or the three nearest.
"""
import json


class FitError(Exception):
    pass


def _solve(a, b):
    """Least squares a x = b by the normal equations (2 or 3 unknowns, Gaussian elimination)."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] + [sum(r[i] * y for r, y in zip(a, b))] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if m[c][c] == 0:
            raise FitError("the sweep cannot separate the fitted terms (all sizes equal?)")
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def in_bucket_range(points, buckets):
    """The points (w, bytes, us) from half the smallest bucket to twice the largest, and a note; where fewer
    than three fall there, the three sizes nearest that range (by ratio)."""
    if not buckets:
        return points, None
    lo, hi = min(buckets) / 2, max(buckets) * 2
    kept = [p for p in points if lo <= p[1] <= hi]
    how = "from half the smallest of DDP's {} buckets ({} bytes) to twice the largest ({})".format(
        len(buckets), min(buckets), max(buckets))
    if len(kept) < 3:
        def distance(p):
            return lo / p[1] if p[1] < lo else p[1] / hi if p[1] > hi else 1.0
        kept = sorted(sorted(points, key=distance)[:3], key=lambda p: p[1])
        how = "nearest the range " + how
    if len(kept) < 3:
        return points, None
    return kept, f"fitted to the {len(kept)} sizes from {kept[0][1]} to {kept[-1][1]} bytes, {how}"


def at_buckets(points, buckets):
    """One point (w, bytes, us) per bucket, its time interpolated between the sweep's neighbouring sizes
    (the end segments extended), and a note; (None, None) where the buckets have fewer than two sizes (a
    line through one size is not determined)."""
    if not buckets or len(set(buckets)) < 2 or len(points) < 2:
        return None, None
    pts = sorted(points, key=lambda p: p[1])
    w = pts[0][0]

    def time_at(b):
        i = next((k for k in range(1, len(pts) - 1) if b <= pts[k][1]), len(pts) - 1)
        (_, b0, t0), (_, b1, t1) = pts[i - 1], pts[i]
        return t0 + (t1 - t0) * (b - b0) / (b1 - b0)

    return ([(w, b, time_at(b)) for b in sorted(buckets)],
            f"fitted to the sweep's times at DDP's {len(buckets)} buckets ({min(buckets)} to {max(buckets)} bytes), "
            "interpolated between its sizes")


def _fit_points(points, notes):
    """[launch, latency, per-byte] by relative least squares; a negative launch or latency fixed at 0."""
    free = [False, True, True]  # launch, latency, per-byte
    x = [0.0, 0.0, 0.0]
    for _ in range(3):
        cols = [c for c in range(3) if free[c]]
        rows = []
        for w, b, t in points:
            steps = 2.0 * (w - 1)
            full = (1.0, steps, steps / w * b)
            rows.append([full[c] / t for c in cols])
        solved = _solve(rows, [1.0] * len(rows))
        x = [0.0, 0.0, 0.0]
        for c, v in zip(cols, solved):
            x[c] = v
        negative = [c for c in (0, 1) if free[c] and x[c] < 0]
        for c in negative:
            free[c] = False
            notes.append(f"the {'launch overhead' if c == 0 else 'latency'} came out negative: fixed at 0")
        if not negative:
            break
    return x


def fit_sweep(path, buckets=None):
    """{'launch_overhead_us', 'latency_us', 'bandwidth_GBps', 'points', 'notes', 'world_sizes'} of a sweep file,
    fitted at `buckets` (bytes) where given (at_buckets, else in_bucket_range); where those points give no
    positive time per byte (a noisy sweep), at all the sweep's sizes, and a note says so."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    world = int(doc["world_size"])
    points = [(world, int(r["bytes"]), float(r["time_us"])) for r in doc["sweep"]]
    if world < 2:
        raise FitError(f"{path}: a sweep at W = {world}; latency and bandwidth need W >= 2")
    chosen, range_note = at_buckets(points, buckets)
    if not chosen:
        chosen, range_note = in_bucket_range(points, buckets)
    notes = [f"one world size (W = {world}): launch overhead fixed at 0"]
    tried = [range_note] if range_note else []
    x = _fit_points(chosen, tried)
    if not x[2] > 0 and chosen is not points:
        notes.append(f"{range_note or 'the sizes around the buckets'}: no positive time per byte there (a noisy "
                     f"sweep), so all {len(points)} sizes fitted")
        chosen = points
        x = _fit_points(chosen, notes)
    else:
        notes += tried
    if not x[2] > 0:
        raise FitError(f"{path}: the fitted time per byte is not positive: the sweep does not grow with size")
    return {"launch_overhead_us": x[0], "latency_us": x[1], "bandwidth_GBps": 1e-3 / x[2], "points": len(chosen),
            "notes": notes, "transport": doc.get("transport", ""), "world_size": world}


def fit_latency(path, buckets, bandwidth_GBps):
    """profile --cluster --collective: a ring step's fixed cost with the bandwidth held at the cluster
    description's (the emulation holds it, checked), by relative least squares of
    2(W-1) latency + 2(W-1)/W b / bandwidth over the sweep's points at the buckets (as fit_sweep picks them).
    One free term: a two-term fit trades latency against bandwidth from sweep to sweep (ResNet-18's, two
    sweeps on the same 1 Gbit/s cluster: 2,879 and 471 us), and only the latency is used."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    world = int(doc["world_size"])
    if world < 2:
        raise FitError(f"{path}: a sweep at W = {world}; a ring step's latency needs W >= 2")
    points = [(world, int(r["bytes"]), float(r["time_us"])) for r in doc["sweep"]]
    chosen, note = at_buckets(points, buckets)
    if not chosen:
        chosen, note = in_bucket_range(points, buckets)
    us_per_byte = 1e-3 / bandwidth_GBps
    num = den = 0.0
    for w, b, t in chosen:
        steps = 2.0 * (w - 1)
        num += (t - steps / w * b * us_per_byte) / t * (steps / t)
        den += (steps / t) ** 2
    latency = max(0.0, num / den)
    notes = [f"bandwidth held at the cluster's {bandwidth_GBps:.6g} GB/s"] + ([note] if note else [])
    if num < 0:
        notes.append("the sweep is faster than the bandwidth alone allows: latency fixed at 0")
    return {"latency_us": latency, "points": len(chosen), "notes": notes, "transport": doc.get("transport", ""),
            "world_size": world, "path": path}
