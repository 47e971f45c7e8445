"""ddpsim_torch's pure parts under pytest (no torch, no network): the command-line parsers,
the comm hooks' checks and PowerSGD's choice of matrices, the collective fit at the buckets,
and the package's version against the project's. ctest python.pytest runs them."""
import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import ddpsim_torch  # noqa: E402
from ddpsim_torch import fit, hooks, network, overlap  # noqa: E402


def test_version_is_the_projects():
    cmake = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    version = re.search(r"project\(ddpsim VERSION ([0-9.]+)", cmake).group(1)
    assert version == ddpsim_torch.__version__
    pyproject = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    assert re.search(r'^version = "([0-9.]+)"', pyproject, re.M).group(1) == version
    package = open(os.path.join(ROOT, "python", "ddpsim", "__init__.py"), encoding="utf-8").read()
    assert re.search(r'^__version__ = "([0-9.]+)"', package, re.M).group(1) == version


@pytest.mark.parametrize("text, bps", [("1gbit", 1e9), ("400mbit", 4e8), ("2.5gbit", 2.5e9), (" 100MBIT ", 1e8)])
def test_rates(text, bps):
    assert network.parse_rate(text) == bps


@pytest.mark.parametrize("text", ["1gb", "0mbit", "100kbit", "50gbit", "fast"])
def test_bad_rates_say_what_is_expected(text):
    with pytest.raises(ValueError, match="expected a rate"):
        network.parse_rate(text)


def test_slow_rank():
    assert network.parse_slow_rank("1:0.25") == (1, 0.25)
    with pytest.raises(ValueError, match="R:FRACTION"):
        network.parse_slow_rank("1:1.5")


def test_hook_options_typed_and_checked():
    assert hooks.parse_options("powerSGD", ["matrix_approximation_rank=4", "warm_start=false"], "gloo") == {
        "matrix_approximation_rank": 4, "warm_start": False}
    with pytest.raises(hooks.HookError, match="gloo cannot all-reduce bfloat16"):
        hooks.parse_options("bf16_compress", [], "gloo")
    with pytest.raises(hooks.HookError, match="a PowerSGDState option"):
        hooks.parse_options("fp16_compress", ["warm_start=false"], "nccl")
    with pytest.raises(hooks.HookError, match="needs one bucket"):
        hooks.check_one_bucket(100 << 20, 25, 1)


def test_powersgd_compresses_what_should_compress_says():
    params = [(64, 32, 3, 3), (64,), (500, 8)]
    # (64 + 288) x 4 x 2 < 64 x 288; a vector never; (500 + 8) x 4 x 2 > 500 x 8.
    assert hooks._matrices(params, 4, 2) == [(64, 288, 4)]
    assert hooks._matrices(params, 4, 0.1) == [(64, 288, 4), (64, 1, 1), (500, 8, 4)]


def test_fit_at_the_buckets_goes_through_the_sweeps_points():
    points = [(2, 1 << 20, 9000.0), (2, 4 << 20, 34000.0), (2, 16 << 20, 135000.0)]
    at, note = fit.at_buckets(points, [2 << 20, 8 << 20])
    assert [b for _, b, _ in at] == [2 << 20, 8 << 20]
    assert at[0][2] == pytest.approx(9000 + (34000 - 9000) / 3)
    assert "interpolated" in note


# The emulated cluster's layout (fabric.py): what a description becomes, with no namespace made.
TWO_BY_TWO = {"nodes": 2, "gpus_per_node": 2, "nics_per_node": 1, "intra": {"bandwidth_GBps": 0.1, "duplex": "full"},
              "inter": {"topology": "star", "bandwidth_GBps": 0.025, "duplex": "full"}}


def test_layout_two_levels_paths_cross_both_nics():
    from ddpsim_torch import fabric
    layout = fabric.Layout(TWO_BY_TWO)
    assert [h["address"] for h in layout.hosts] == ["127.1.0.1", "127.1.0.2", "127.1.1.1", "127.1.1.2"]
    assert [(link.name, direction) for link, direction in layout.path(1, 2)] == [
        ("host1", "a"), ("nic0", "a"), ("nic1", "b"), ("host2", "b")]
    assert [link.name for link, _ in layout.path(0, 1)] == ["host0", "host1"]
    assert min(link.rate_bps for link, _ in layout.path(1, 2)) == 200e6


def test_layout_fat_tree_leaf_uplinks_oversubscribed():
    from ddpsim_torch import fabric
    tree = {"nodes": 4, "gpus_per_node": 1, "nics_per_node": 1, "intra": {"bandwidth_GBps": 1},
            "inter": {"topology": "fat_tree", "bandwidth_GBps": 0.0125, "nodes_per_switch": 2, "oversubscription": 2,
                      "duplex": "full"}}
    layout = fabric.Layout(tree)
    links = layout.links_by_name()
    assert links["leaf0"].rate_bps == pytest.approx(100e6)  # 2 NICs of 100 Mbit/s behind it, oversubscribed 2:1
    assert [link.name for link, _ in layout.path(1, 2)] == ["host1", "leaf0", "leaf1", "host2"]


@pytest.mark.parametrize("change, words", [
    ({"nics_per_node": 2}, "nics_per_node"),
    ({"inter": {"topology": "star", "bandwidth_GBps": 1, "duplex": "half"}}, "duplex half"),
])
def test_layout_refuses_what_it_cannot_emulate(change, words):
    from ddpsim_torch import fabric
    with pytest.raises(fabric.FabricError, match=words):
        fabric.Layout(dict(TWO_BY_TWO, **change))


def test_layout_slow_rank_needs_a_shaped_link():
    from ddpsim_torch import fabric
    fast = dict(TWO_BY_TWO, intra={"bandwidth_GBps": 100, "duplex": "full"})
    with pytest.raises(fabric.FabricError, match="unshaped"):
        fabric.Layout(fast, slow={1: 0.5})
    assert fabric.Layout(TWO_BY_TWO, slow={1: 0.5}).links_by_name()["host1"].rate_bps == pytest.approx(400e6)


def test_steplog_writes_the_rank_log(tmp_path, monkeypatch):
    import json
    from ddpsim_torch import StepLog
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("DDPSIM_NETWORK_CHECK", raising=False)
    with StepLog(str(tmp_path / "run")) as log:
        for _ in range(3):
            with log.step(examples=4):
                pass
    doc = json.load(open(tmp_path / "run.rank1.json", encoding="utf-8"))
    assert (doc["rank"], doc["world_size"], len(doc["steps"])) == (1, 2, 3)
    assert [s["iteration"] for s in doc["steps"]] == [0, 1, 2] and all(s["step_ms"] >= 0 for s in doc["steps"])
    starts = [s["start_ms"] for s in doc["steps"]]
    assert starts == sorted(starts) and starts[0] >= 0


def test_steplog_puts_a_fault_on_its_clock(tmp_path, monkeypatch):
    import json
    import time
    from ddpsim_torch import StepLog
    from ddpsim_torch.fabric_run import _record_applied
    record = tmp_path / "check.json"
    record.write_text(json.dumps({"ranks": 2, "faults": [{"at_s": 0.0, "kind": "slow", "rank": 1, "value": 0.25}]}))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("DDPSIM_NETWORK_CHECK", str(record))
    with StepLog(str(tmp_path / "run")) as log:
        with log.step():
            time.sleep(0.02)
        _record_applied(str(record), 0.5, "rank 1's link at 0.25 of its rate")  # as `ddpsim network` does mid-run
        with log.step():
            pass
    doc = json.load(open(tmp_path / "run.rank0.json", encoding="utf-8"))
    applied = doc["network"]["applied"]
    assert [a["what"] for a in applied] == ["rank 1's link at 0.25 of its rate"] and applied[0]["at_s"] == 0.5
    # Between the two steps' starts, on the log's clock.
    assert doc["steps"][0]["start_ms"] + 20 <= applied[0]["at_ms"] <= doc["steps"][1]["start_ms"]
    assert not (tmp_path / "check.json.part").exists()


def test_fit_latency_holds_the_bandwidth(tmp_path):
    import json
    # W = 4 at 1 GB/s with 100 us a ring step: 6 steps, 1.5 b / 1e3 us; fitted back with the bandwidth held.
    sizes = [1 << 20, 4 << 20, 16 << 20]
    sweep = {"world_size": 4, "transport": "test", "sweep": [
        {"bytes": b, "time_us": 6 * 100 + 1.5 * b / 1e3} for b in sizes]}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(sweep))
    got = fit.fit_latency(str(path), None, 1.0)
    assert got["latency_us"] == pytest.approx(100, rel=1e-9) and got["world_size"] == 4
    assert fit.fit_latency(str(path), None, 0.5)["latency_us"] == 0  # slower than the sweep: fixed at 0


def test_overlap_slowdowns_are_the_engines_model():
    # 100 chunks of 1 ms alone; beside a 40 ms all-reduce (alone) the loop ran 50 chunks in 100 ms:
    # a chunk took 2 ms (s = 1) and the all-reduce 100 ms (c = 1.5).
    r = overlap.slowdowns(1e-3, 40e-3, 100e-3, 50)
    assert r["compute_slowdown"] == pytest.approx(1.0)
    assert r["comm_slowdown"] == pytest.approx(1.5)
    # Faster together than alone is noise, not a speed-up: 0.
    assert overlap.slowdowns(1e-3, 40e-3, 30e-3, 40)["comm_slowdown"] == 0
    none = overlap.slowdowns(1e-3, 40e-3, 50e-3, 0)
    assert none["compute_slowdown"] is None and "no chunk ran" in none["note"]
    # Pooled as one step: a 1 ms all-reduce that took 4 beside 2 chunks of 1 ms, and a 20 ms one that took
    # 30 beside 20 chunks; a 10 ms one beside no chunk counts for c only: c = (4 + 30 + 12) / (1 + 20 + 10) - 1,
    # s = (4 + 30) / (2 + 20) - 1.
    sizes = [{"chunk_ms": 1, "allreduce_ms": 1, "both_ms": 4, "chunks_beside": 2},
             {"chunk_ms": 1, "allreduce_ms": 20, "both_ms": 30, "chunks_beside": 20},
             {"chunk_ms": 1, "allreduce_ms": 10, "both_ms": 12, "chunks_beside": 0}]
    pair = overlap.summarise(sizes)
    assert pair == {"compute_slowdown": pytest.approx(34 / 22 - 1), "comm_slowdown": pytest.approx(46 / 31 - 1)}
    with pytest.raises(overlap.OverlapError, match="no size ran a chunk"):
        overlap.summarise(sizes[2:])


def test_overlap_file_to_a_scenarios_contention(tmp_path):
    doc = {"format": overlap.FORMAT, "backend": "gloo", "device": "cpu", "world_size": 2, "threads": 1,
           "sizes": [{"bytes": 1 << 20}, {"bytes": 25 << 20}], "contention": {"compute_slowdown": 0.5, "comm_slowdown": 1.25}}
    path = tmp_path / "o.json"
    path.write_text(json.dumps(doc))
    lines = overlap.contention_lines(str(path))
    assert lines[0].startswith("contention:") and "gloo on cpu, 2 ranks" in lines[0]
    assert lines[1].split("#")[0].strip() == "compute_slowdown: 0.5"
    assert lines[2].split("#")[0].strip() == "comm_slowdown: 1.25"
    doc["contention"]["comm_slowdown"] = -1
    path.write_text(json.dumps(doc))
    with pytest.raises(overlap.OverlapError, match="expected compute_slowdown from 0 to 1000"):
        overlap.read(str(path))
    path.write_text(json.dumps({"format": overlap.FORMAT, "error": "no size ran a chunk beside its all-reduce"}))
    with pytest.raises(overlap.OverlapError, match="no size ran a chunk"):
        overlap.read(str(path))
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(overlap.OverlapError, match="expected an overlap measurement"):
        overlap.read(str(path))
    with pytest.raises(overlap.OverlapError, match="cannot read"):
        overlap.read(str(tmp_path / "missing.json"))
