"""The example notebook (python/examples/predict.ipynb) executed end to end
by a Jupyter kernel (nbclient, ipykernel): a model object profiled, predicted
at W = 8, 64 and 512, with its table and chart. ctest python.api runs it with
the build's package; ctest python.wheel runs it again on the installed wheel."""
import os

import nbclient
import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NOTEBOOK = os.environ.get("DDPSIM_NOTEBOOK", os.path.join(ROOT, "python", "examples", "predict.ipynb"))


def outputs(cell, mime):
    return [o["data"][mime] for o in cell.get("outputs", []) if mime in o.get("data", {})]


def test_the_example_notebook_runs_end_to_end(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, errors
    code = [c for c in nb.cells if c.cell_type == "code"]
    scenario, result, table, chart, memory = code[1:6]
    assert "W=[8, 64, 512]" in outputs(scenario, "text/plain")[0]
    page = outputs(result, "text/html")[0]
    assert page.count("<tr>") == 4 and "<svg" in page  # the header and three rows; the chart
    frame = outputs(table, "text/html")[0]
    assert all(f"<td>{w}</td>" in frame or f">{w}<" in frame for w in (8, 64, 512))
    assert outputs(chart, "image/svg+xml")
    assert "workers" in outputs(memory, "text/html")[0]
