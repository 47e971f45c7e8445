"""overlap: how much compute and an all-reduce slow each other when they run
at once on the same ranks, measured on the target backend and independent of
any training run (docs/cost-models.md#compute-slowed-by-communication).

For each all-reduce size (default 1 and 25 MiB: a first bucket and DDP's
bucket cap), every rank, in turn and --reps times:

- compute alone: --chunks matrix products (a chunk: one --matrix x --matrix
  float32 product), timed; a chunk's time is the mean;
- the all-reduce alone, timed (async_op, waited);
- both: the all-reduce started (async_op), then chunks computed one after
  another until the all-reduce has completed; the loop's time t and the n
  chunks it ran.

Compute and communication then ran beside each other for the whole
all-reduce, on every rank, so with the engine's model (a compute op runs
1 + s times slower while a collective is in flight on its rank; a
collective runs 1 + c times slower while a member computes):

    s = (t / n) / chunk - 1        c = t / allreduce - 1

(t overshoots the all-reduce's end by less than a chunk: the chunk is kept
small against the all-reduce). Each figure is the median of the reps on
rank 0 (the ranks are symmetric). The scenario's pair pools the sizes as one
step that runs each once: c = sum(t) / sum(allreduce) - 1 and
s = sum(t) / sum(n x chunk) - 1 (a latency-bound small all-reduce slows more,
in proportion, than a bucket-sized one; pooled, each weighs its time). The
JSON holds every size's figures; `ddpsim_torch profile --overlap` and
`ddpsim calibrate --overlap` read the pair into a scenario's `contention:`.
"""
import json

FORMAT = "ddpsim-overlap-1"


class OverlapError(Exception):
    """An overlap measurement that cannot be read or made (exit 2)."""


def slowdowns(chunk_s, allreduce_s, both_s, chunks_beside):
    """(s, c) of the engine's model from one size's medians (see the module's docstring)."""
    if chunks_beside < 1:
        return {"compute_slowdown": None, "comm_slowdown": max(0.0, both_s / allreduce_s - 1),
                "note": "no chunk ran beside the all-reduce: make it larger or --matrix smaller"}
    return {"compute_slowdown": max(0.0, (both_s / chunks_beside) / chunk_s - 1),
            "comm_slowdown": max(0.0, both_s / allreduce_s - 1)}


def summarise(sizes):
    """The scenario's pair, pooled over the sizes as one step that runs each once: the time beside compute
    over the time alone (c), and the loop's time over its chunks' time alone (s); sizes with no chunk beside
    their all-reduce count for c only."""
    both = sum(r["both_ms"] for r in sizes)
    alone = sum(r["allreduce_ms"] for r in sizes)
    timed = [r for r in sizes if r["chunks_beside"] >= 1]
    if not timed:
        raise OverlapError("no size ran a chunk beside its all-reduce: larger sizes or a smaller --matrix")
    chunks = sum(r["chunks_beside"] * r["chunk_ms"] for r in timed)
    return {"compute_slowdown": max(0.0, sum(r["both_ms"] for r in timed) / chunks - 1),
            "comm_slowdown": max(0.0, both / alone - 1)}


def read(path):
    """The contention pair and a one-line source of an overlap JSON (OverlapError if it is not one)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise OverlapError(f"{path}: cannot read an overlap measurement ({e})") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise OverlapError(f"{path}: expected an overlap measurement (format {FORMAT}, from `python3 -m ddpsim_torch "
                           "overlap`)")
    if "error" in doc:
        raise OverlapError(f"{path}: {doc['error']}")
    try:
        s, c = float(doc["contention"]["compute_slowdown"]), float(doc["contention"]["comm_slowdown"])
        source = (f"{path}: {doc['backend']} on {doc['device']}, {doc['world_size']} ranks, {doc['threads']} "
                  f"thread(s), {len(doc['sizes'])} all-reduce size(s) pooled")
    except (KeyError, TypeError, ValueError) as e:
        raise OverlapError(f"{path}: an overlap measurement without its figures ({e!r})") from e
    if not (0 <= s <= 1000 and 0 <= c <= 1e6):
        raise OverlapError(f"{path}: contention {s}, {c}: expected compute_slowdown from 0 to 1000 and "
                           "comm_slowdown from 0 to 1e6 (the scenario's bounds)")
    return s, c, source


def contention_lines(path):
    """A scenario's contention: section from an overlap measurement, with where it came from."""
    s, c, source = read(path)
    return [f"contention:                   # measured apart from any training run: {source}",
            f"  compute_slowdown: {s:.6g}   # compute beside an all-reduce takes 1 + this times as long",
            f"  comm_slowdown: {c:.6g}   # an all-reduce beside compute takes 1 + this times as long"]
