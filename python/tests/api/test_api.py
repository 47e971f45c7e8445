"""The Python API (python/ddpsim) against the ddpsim command: the same
results byte for byte, errors with exit codes and locations, progress and
cancellation, dicts that mirror the YAML. ctest python.api runs it with the
build's package first on PYTHONPATH and DDPSIM_BIN the build's command."""
import json
import os
import subprocess

import pytest

import ddpsim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ["DDPSIM_BIN"]
SCALING = os.path.join(ROOT, "scenarios", "scaling_lab.yaml")


def cli(*args, rc=0):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    assert p.returncode == rc, p.stderr
    return p


def test_the_package_is_the_builds():
    assert ddpsim._core.__file__.startswith(os.path.dirname(ddpsim.__file__))
    assert ddpsim.version().startswith(ddpsim.__version__)


@pytest.mark.parametrize("name", ["scaling_lab.yaml", "bucket_sweep.yaml", "hang_skip_backward.yaml",
                                  "fsdp/gpt2_full_shard.yaml", "restart_8gpu.yaml"])
def test_run_is_the_commands_json_byte_for_byte(name, tmp_path):
    path = os.path.join(ROOT, "scenarios", name)
    if not os.path.exists(path):
        pytest.fail(f"no shipped scenario {name}")
    out = tmp_path / "r.json"
    cli("run", path, "--json", str(out))
    r = ddpsim.run(path)
    assert r.json() == out.read_text()
    doc = json.loads(out.read_text())
    assert [(run.world_size, run.step_ms) for run in r.runs] == \
        [(run["world_size"], run["step_ms"]) for run in doc["runs"]]
    assert [run.closed_form_step_ms for run in r.runs] == [run["closed_form_step_ms"] for run in doc["runs"]]


def test_table_csv_and_plot_are_the_commands(tmp_path):
    csv, svg = tmp_path / "r.csv", tmp_path / "r.svg"
    p = cli("run", SCALING, "--csv", str(csv), "--plot", str(svg))
    r = ddpsim.run(SCALING)
    assert r.table() == p.stdout
    assert r.csv() == csv.read_text()
    assert r.svg() == svg.read_text()


def test_world_sizes_and_engine_override_as_the_command_does(tmp_path):
    out = tmp_path / "r.json"
    cli("run", SCALING, "--world-size", "8,64,512", "--json", str(out))
    r = ddpsim.run(SCALING, world_sizes=[8, 64, 512])
    assert [run.world_size for run in r.runs] == [8, 64, 512]
    assert r.json() == out.read_text()


def test_the_result_does_not_depend_on_threads():
    assert ddpsim.run(SCALING, threads=1).json() == ddpsim.run(SCALING, threads=3).json()


def test_a_dict_mirrors_the_yaml():
    s = ddpsim.load(SCALING)
    d = s.to_dict()
    assert d["world_size"] == s.world_sizes
    from_dict = ddpsim.load(d)
    assert from_dict.source == "<dict>"
    assert [(r.world_size, r.step_ms) for r in ddpsim.run(from_dict).runs] == \
        [(r.world_size, r.step_ms) for r in ddpsim.run(s).runs]
    wider = s.replace(world_size=[1, 2])
    assert wider.world_sizes == [1, 2]


def test_bad_input_is_an_error_with_its_location():
    d = ddpsim.load(SCALING).to_dict()
    d["training"]["iterations"] = -3
    with pytest.raises(ddpsim.Error) as e:
        ddpsim.load(d)
    assert e.value.exit_code == 2
    assert e.value.file == "<dict>" and e.value.line > 0 and e.value.column > 0
    assert e.value.key == "training.iterations"
    # The location points at the key's line of the YAML the dict was written as.
    text = ddpsim._core.json_to_yaml(json.dumps(d))
    assert "iterations" in text.splitlines()[e.value.line - 1]
    with pytest.raises(ddpsim.Error) as missing:
        ddpsim.load(os.path.join(ROOT, "no_such.yaml"))
    assert missing.value.exit_code == 2 and "no_such.yaml" in str(missing.value)
    with pytest.raises(ddpsim.Error) as engine:
        ddpsim.run(SCALING, engine="ns3")
    assert engine.value.exit_code == 2 and engine.value.key == "engine"
    with pytest.raises(TypeError):
        ddpsim.load(42)


def test_progress_is_reported_and_can_cancel():
    seen = []
    ddpsim.run(SCALING, threads=1, progress=lambda done, total: seen.append((done, total)))
    total = seen[-1][1]
    assert seen == [(i, total) for i in range(1, total + 1)]
    calls = []

    def stop(done, total):
        calls.append(done)
        return False

    with pytest.raises(ddpsim.Error) as e:
        ddpsim.run(SCALING, threads=1, progress=stop)
    assert e.value.exit_code == 130
    assert calls == [1]


def test_memory_is_the_commands(tmp_path):
    path = os.path.join(ROOT, "scenarios", "fsdp", "gpt2_full_shard.yaml")
    out = tmp_path / "m.json"
    p = subprocess.run([BIN, "memory", path, "--json", str(out)], capture_output=True, text=True)
    m = ddpsim.memory(path)
    assert m.text == p.stdout
    assert m.json == out.read_text()
    assert p.returncode == (0 if m.all_fit() else 4)
    assert [r.world_size for r in m.rows] == ddpsim.load(path).world_sizes
    assert all(r.peak == r.parameters + r.gradients + r.optimizer_states + r.buckets + r.unsharded + r.activations
               for r in m.rows)


def test_buckets_are_the_commands(tmp_path):
    path = os.path.join(ROOT, "scenarios", "bucket_sweep.yaml")
    out = tmp_path / "b.json"
    p = cli("buckets", path, "--json", str(out))
    b = ddpsim.buckets(path)
    assert b.text == p.stdout
    assert b.json == out.read_text()
    doc = json.loads(b.json)
    assert [x.bytes for x in b.initial] == [x["bytes"] for x in doc["initial"]]
    assert (b.rebuilt is None) == (doc["rebuilt"] is None)
    assert sum(len(x.params) for x in b.initial) > 0


def test_advise_is_the_commands(tmp_path):
    path = os.path.join(ROOT, "bench", "advise_gpt2_512.yaml")
    out = tmp_path / "a.json"
    p = cli("advise", path, "--world-size", "8", "--json", str(out))
    a = ddpsim.advise(path, world_sizes=[8])
    assert a.text == p.stdout
    assert a.json == out.read_text()
    assert a.ranked and a.reasons
    assert a.ranked[0].description in a.text


def test_explain_is_the_commands():
    folder = os.path.join(ROOT, "tests", "flight_recorder", "tutorial")
    p = cli("explain", folder)
    explained = ddpsim.explain(folder)
    assert "".join(e.text for e in explained) == p.stdout
    assert any(e.stuck for e in explained)


def test_notebook_views():
    r = ddpsim.run(SCALING)
    html = r._repr_html_()
    assert html.count("<tr>") == len(r.runs) + 1 and "<svg" in html
    df = r.to_dataframe()
    assert list(df["world_size"]) == [run.world_size for run in r.runs]
    assert "<!DOCTYPE html>" in r.html() or "<html" in r.html()
