"""oracle.torch_flight_recorder: the shipped hang scenarios run for real, their flight-recorder dumps
read by ddpsim explain and by PyTorch's own analyzer, beside ddpsim's simulation of the same job.

Each case is the seed's ddp_epoch.py job (Linear(8, 1), 128 examples, batch 8 a rank, 2 epochs) on
W = 4 gloo processes with one fault, as the scenario describes it:
  skip_backward  scenarios/hang_skip_backward.yaml: rank 1 skips backward in iteration 3
  uneven_inputs  scenarios/hang_uneven_inputs.yaml: rank 0 has one batch fewer each epoch
  rank0_metric   scenarios/hang_rank0_metric.yaml: rank 0 alone all-reduces a metric in iteration 2
The flight recorder is on (TORCH_FR_BUFFER_SIZE=2000: PyTorch 2.14 records gloo too); the process
group's timeout is 5 s; each rank dumps its recorder (torch._C._distributed_c10d._dump_fr_trace, the
pickle PyTorch writes on a watchdog timeout) when its collective fails, or after its final barrier.

Then, per case:
- `ddpsim explain DIR` names the stuck collective (collective_seq_id) and the culprit;
- PyTorch's analyzer, `python -m torch.distributed.flight_recorder.fr_trace DIR`, reads the same dumps
  (a copy: torch 2.14.1's fr_trace raises KeyError ('0', 0) on gloo's own dumps, whose pg_config
  names the default group '' instead of '0'; the copy renames it) and names its collective and ranks;
- `ddpsim run` of the scenario on gloo with --flight-recorder names its stuck collective and culprit.
All three must agree on the collective_seq_id and the rank (fr_trace compares every rank with the
first: where it flags all ranks but one, the one left is its odd one out). The three reports are
printed: docs/flight-recorder.md shows them side by side.

Exits 77 (ctest: skipped) without torch.
Usage: torch_flight_recorder.py DDPSIM_BINARY WORK_DIR
"""
import os
import pickle
import re
import shutil
import subprocess
import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIPPED: torch is not installed ({e})")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
WORLD = 4
CASES = {"skip_backward": "hang_skip_backward", "uneven_inputs": "hang_uneven_inputs",
         "rank0_metric": "hang_rank0_metric"}

# One rank of the job; argv: rank, case, dump folder, store file.
JOB = r'''
import datetime, os, sys
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
rank, case, out, store = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
world = 4
dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=5))
torch.manual_seed(0)
data, target = torch.randn(128, 8), torch.randn(128, 1)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
per_epoch = 128 // 8 // world
error, g = None, 0
try:
    for epoch in range(2):
        n = per_epoch - (1 if case == "uneven_inputs" and rank == 0 else 0)
        for it in range(n):
            lo = (it * world + rank) * 8
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(data[lo:lo + 8]), target[lo:lo + 8])
            skip = case == "skip_backward" and rank == 1 and g == 3
            if not skip:
                loss.backward()
                opt.step()
            if case == "rank0_metric" and rank == 0 and g == 2:
                metric = loss.detach().reshape(1).clone()
                dist.all_reduce(metric)
            g += 1
    dist.barrier()
except Exception as e:
    error = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
from torch._C._distributed_c10d import _dump_fr_trace
with open(os.path.join(out, f"nccl_trace_rank_{rank}"), "wb") as f:
    f.write(_dump_fr_trace(includeCollectives=True))
print(f"rank {rank}: {error or 'finished'}", flush=True)
os._exit(0)
'''


def run_job(case, work):
    out = os.path.join(work, case)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    store = os.path.join(work, f"{case}.store")
    if os.path.exists(store):
        os.remove(store)
    script = os.path.join(work, "hang_job.py")
    with open(script, "w") as f:
        f.write(JOB)
    env = dict(os.environ, TORCH_FR_BUFFER_SIZE="2000")
    procs = [subprocess.Popen([sys.executable, script, str(r), case, out, store], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for r in range(WORLD)]
    try:
        said = [p.communicate(timeout=120)[0].strip() for p in procs]
    finally:  # a rank past its 5 s timeout by minutes is killed, not left behind
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out, said


def ddpsim_explain(ddpsim, folder):
    text = subprocess.run([ddpsim, "explain", folder], capture_output=True, text=True, check=True).stdout
    seq = int(re.search(r"collective_seq_id (\d+):\n", text).group(1))
    culprit = int(re.search(r"\n  culprit: rank (\d+):", text).group(1))
    return seq, culprit, text


def pytorch_fr_trace(folder):
    """fr_trace on a copy with the default group named '0' (see the module's docstring)."""
    fixed = folder + "_for_fr_trace"
    shutil.rmtree(fixed, ignore_errors=True)
    os.makedirs(fixed)
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "rb") as f:
            dump = pickle.load(f)
        if "" in dump.get("pg_config", {}):
            config = dump["pg_config"].pop("")
            dump["pg_config"]["0"] = dict(config, name="0", desc="default_pg")
        with open(os.path.join(fixed, name), "wb") as f:
            pickle.dump(dump, f)
    done = subprocess.run([sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace", fixed,
                           "--prefix", "nccl_trace_rank_"], capture_output=True, text=True)
    text = done.stdout + done.stderr
    found = re.search(r"Collective sequence number: (\d+) has errors", text)
    if done.returncode != 0 or not found:
        return None, None, text
    seq = int(found.group(1))
    section = text[found.start():]
    flagged = sorted({int(r) for r in re.findall(r"Culprit rank (\d+)", section.split("\n\n")[0])})
    odd = flagged[0] if len(flagged) == 1 else None
    if len(flagged) == WORLD - 1:  # every rank but one differs from the first: the one left is odd
        odd = (set(range(WORLD)) - set(flagged)).pop()
    return seq, odd, text


def ddpsim_run(ddpsim, scenario, work):
    """The scenario on gloo (the real jobs' backend), simulated with its dumps written."""
    gloo = os.path.join(work, os.path.basename(scenario))
    with open(scenario) as f:
        text = f.read().replace("backend: nccl", "backend: gloo")
    with open(gloo, "w") as f:
        f.write(text)
    dumps = os.path.join(work, "sim_" + os.path.basename(scenario))
    shutil.rmtree(dumps, ignore_errors=True)
    out = subprocess.run([ddpsim, "run", gloo, "--flight-recorder", dumps], capture_output=True, text=True,
                         check=True).stdout
    seq = re.search(r"\n  collective_seq_id (\d+):\n", out)
    culprit = re.search(r"\n  culprit: rank (\d+):", out)
    return (int(seq.group(1)) if seq else None), (int(culprit.group(1)) if culprit else None), out


def main():
    ddpsim, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    failures = 0
    for case, scenario in CASES.items():
        folder, said = run_job(case, work)
        mine = ddpsim_explain(ddpsim, folder)
        theirs = pytorch_fr_trace(folder)
        sim = ddpsim_run(ddpsim, os.path.join(ROOT, "scenarios", scenario + ".yaml"), work)
        print(f"=== {case} (scenarios/{scenario}.yaml, gloo, W = {WORLD}): the ranks said")
        print("\n".join("  " + s for s in said))
        print(f"--- ddpsim explain {folder}\n{mine[2]}--- PyTorch's fr_trace\n{theirs[2]}--- ddpsim run (simulated)\n"
              + "\n".join(line for line in sim[2].splitlines() if line.startswith("  ") or "W=" in line))
        agree = mine[0] == theirs[0] == sim[0] and mine[1] == theirs[1] == sim[1]
        failures += not agree
        print(f"{'ok  ' if agree else 'FAIL'} {case}: collective_seq_id explain {mine[0]}, fr_trace {theirs[0]}, "
              f"simulated {sim[0]}; culprit explain rank {mine[1]}, fr_trace rank {theirs[1]}, simulated rank {sim[1]}")
    print(f"{len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
