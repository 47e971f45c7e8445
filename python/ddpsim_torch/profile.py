"""profile: run a recipe on one device and write the ddpsim scenario of what it measured.

What is measured, per step after --warmup steps, medians over --steps:
- forward: from the batch entering the model to the loss, attributed to the
  modules that own parameters in the order their forward ends (each owner
  takes the time since the previous owner's forward ended; the first takes
  the time from the start, the last the rest up to the loss);
- backward: from loss.backward() to its return, attributed likewise in the
  order gradients become ready (each owner takes the time since the previous
  owner's last gradient, the last owner the rest);
- gradient readiness: a post-hook on each parameter's gradient accumulator,
  the way DDP's Reducer registers its autograd hooks
  (register_post_accumulate_grad_hook on torch 2.1+, which fires once the
  gradient is accumulated; the accumulator's own post-hook,
  p.expand_as(p).grad_fn.next_functions[0][0], on older torch), which gives
  the exact order;
- the optimizer step;
- what memory needs (memory.py): the optimizer's kind from the state it keeps
  after a step (the scenario's `optimizer`), and the activations autograd
  saves for backward in one forward at the recipe's batch, per layer
  (activation_MB);
- what DDP itself adds (overhead.py): the recipe again under
  DistributedDataParallel on one rank, its backward against the bare one,
  written as ddp.bucket_copy_GBps (--bare: not measured).
With --comm-hook NAME: ddp.comm_hook with the rates of the hook's own work
(casts, passes, matrix products, calls) timed on this device (hooks.py).
With --ranks-per-host N (CPU), N - 1 other processes train the recipe for as
long as all of this is measured (corunners.py): the times of one rank of a
host that N ranks share.
Clocks (clock.py): the host's on CPU, where it is exact; with --device cuda,
CUDA events recorded at the same marks, so GPU work is timed, not its launch.
"""
import json
import statistics
import time

import torch

from . import clock as ddp_clock
from . import corunners
from . import fabric
from . import fit
from . import hooks
from . import memory
from . import overlap
from . import overhead as ddp_overhead
from . import recipe as recipes


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


class _Hooks:
    """Forward-end times per parameter owner and gradient-ready times per parameter."""

    def __init__(self, model, params, mark=time.perf_counter_ns):
        self.mark = mark  # a clock's mark (clock.py), resolved after the step
        self.handles, self.accumulators = [], []
        self.forward_end = {}  # owner name -> ns
        self.ready = {}  # parameter index -> ns
        self.sequence = []  # parameter indices in the order their hooks fired
        self.owners = [(name, m) for name, m in model.named_modules() if any(True for _ in m.parameters(recurse=False))]
        for name, m in self.owners:
            self.handles.append(m.register_forward_hook(self._forward_done(name)))
        for i, (_, p) in enumerate(params):
            if not p.requires_grad:
                continue
            if hasattr(p, "register_post_accumulate_grad_hook"):  # torch 2.1+
                self.handles.append(p.register_post_accumulate_grad_hook(self._ready(i)))
            else:  # torch 1.13: the accumulator's post-hook, as DDP's Reducer
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                self.accumulators.append(acc)  # keep it alive, as DDP's _grad_accs did
                acc.register_hook(self._ready(i))

    def _forward_done(self, name):
        def hook(module, inputs, output):
            self.forward_end[name] = self.mark()
        return hook

    def _ready(self, index):
        def hook(*_):
            if index not in self.ready:
                self.ready[index] = self.mark()
                self.sequence.append(index)
        return hook

    def clear(self):
        self.forward_end.clear()
        self.ready.clear()
        self.sequence.clear()

    def remove(self):
        """Removes what can be removed (1.13's accumulator hooks cannot: they stay, recording nothing)."""
        for h in self.handles:
            h.remove()
        self.clear()


def gradient_ready_order(model, backward):
    """Parameter names in the order DDP's Reducer sees their gradients become ready, from one call of
    backward(model) (which runs forward and backward once)."""
    model.train()
    params = list(model.named_parameters())
    hooks = _Hooks(model, params)
    backward(model)
    order = [params[i][0] for i in hooks.sequence]
    hooks.remove()
    return order


def _attribute(start, marks, end):
    """Each mark's share of [start, end]: the time since the previous mark; the last takes the rest."""
    shares, previous = [], start
    for _, t in marks:
        shares.append(max(0, t - previous))
        previous = max(previous, t)
    if shares:
        shares[-1] += max(0, end - previous)
    return [(key, s) for (key, _), s in zip(marks, shares)]


def measure(built, steps, warmup, clock=None):
    """Runs warmup + steps training steps; returns the measured medians and the ready order."""
    clock = clock or ddp_clock.HostClock()
    model, (inputs, _) = built["model"], built["batch"]
    model.train()
    params = list(model.named_parameters())
    hooks = _Hooks(model, params, clock.mark)
    owner_of = {}
    for name, m in hooks.owners:
        for pname, p in m.named_parameters(recurse=False):
            owner_of.setdefault(id(p), name)  # a shared parameter belongs to the first module that holds it
    index_owner = [owner_of[id(p)] for _, p in params]
    fwd, bwd, opt, total_fwd, total_bwd = {}, {}, [], [], []
    orders = []
    for step in range(warmup + steps):
        hooks.clear()
        t0, t1, t2, t3 = recipes.timed_step(model, built, clock.mark)
        if step < warmup:
            continue
        clock.sync()
        t0, t1, t2, t3 = (clock.resolve(t) for t in (t0, t1, t2, t3))
        marks = sorted(((k, clock.resolve(v)) for k, v in hooks.forward_end.items()), key=lambda kv: kv[1])
        for name, ns in _attribute(t0, marks, t1):
            fwd.setdefault(name, []).append(ns)
        order = [(i, clock.resolve(hooks.ready[i])) for i in hooks.sequence]  # the order the hooks fired
        orders.append([i for i, _ in order])
        # Backward per owner: its last gradient's readiness, in ready order.
        last = {}
        for i, t in order:
            last[index_owner[i]] = t
        for name, ns in _attribute(t1, sorted(last.items(), key=lambda kv: kv[1]), t2):
            bwd.setdefault(name, []).append(ns)
        opt.append(t3 - t2)
        total_fwd.append(t1 - t0)
        total_bwd.append(t2 - t1)
    hooks.remove()
    return {
        "params": params,
        "buffers": list(model.named_buffers()),
        "owners": [name for name, _ in hooks.owners],
        "owner_of_param": index_owner,
        "forward_ms": {k: statistics.median(v) / 1e6 for k, v in fwd.items()},
        "backward_ms": {k: statistics.median(v) / 1e6 for k, v in bwd.items()},
        "optimizer_ms": statistics.median(opt) / 1e6,
        "total_forward_ms": statistics.median(total_fwd) / 1e6,
        "total_backward_ms": statistics.median(total_bwd) / 1e6,
        "step_ms": [(f + b + o) / 1e6 for f, b, o in zip(total_fwd, total_bwd, opt)],
        "orders": orders,
        "local_batch_size": recipes.batch_size(inputs),
    }


def _tensor_line(name, t):
    return f"    - {{name: {json.dumps(name)}, shape: {list(t.shape)}, dtype: {_dtype_name(t.dtype)}}}"


def _layers(m, names):
    """(name, parameter names, forward ms, backward ms, activation bytes) per owner. An owner left with no
    parameter of its own (its only one shared with an earlier module, as a tied output layer) adds its
    times and activations to the next layer, or to the last one."""
    out, pending = [], [0.0, 0.0, 0]
    for owner in m["owners"]:
        params = [names[i] for i in range(len(names)) if m["owner_of_param"][i] == owner]
        own = [m["forward_ms"].get(owner, 0.0) + pending[0], m["backward_ms"].get(owner, 0.0) + pending[1],
               m.get("activations", {}).get(owner, 0) + pending[2]]
        if not params:
            pending = own
            continue
        pending = [0.0, 0.0, 0]
        out.append([owner or "(root)", params] + own)
    if out:
        for k in range(3):
            out[-1][2 + k] += pending[k]
    return out


def _collective_lines(collective):
    """The collective section: fitted to a sweep (fit.fit_sweep's result), or placeholders that say so."""
    if collective is None:
        return ["collective:", "  backend: gloo",
                "  # Not measured: placeholders. Calibrate them: python3 -m ddpsim_torch sweep --world-size 2 --out SWEEP.json,",
                "  # then profile again with --collective SWEEP.json (or ddpsim calibrate --measured SWEEP.json --out C.yaml",
                "  # and `calibration: C.yaml` here). Until then ddpsim marks every prediction of this scenario.",
                "  placeholder: true", "  latency_us: 5", "  bandwidth_GBps: 10"]
    backend = "nccl" if "nccl" in collective["transport"] else "gloo"
    lines = ["collective:", f"  backend: {backend}",
             f"  # Fitted to {collective['path']} ({collective['transport']}, W = {collective['world_size']}, "
             f"{collective['points']} sizes): relative least squares, as ddpsim calibrate"]
    lines += [f"  # note: {n}" for n in collective["notes"]]
    lines += [f"  latency_us: {collective['latency_us']:.6g}", f"  bandwidth_GBps: {collective['bandwidth_GBps']:.6g}",
              f"  launch_overhead_us: {collective['launch_overhead_us']:.6g}"]
    return lines


def _host_line(host):
    """The header line of --ranks-per-host: {"ranks": N, "steps": co-runners' steps}, or None."""
    if host is None:
        return []
    return [f"# Measured with {host['ranks'] - 1} other process(es) training the recipe beside it "
            f"(--ranks-per-host {host['ranks']}; {host['steps']} steps of theirs meanwhile): one rank of a host "
            f"{host['ranks']} ranks share."]


def jitter_lines(m, host):
    """--ranks-per-host N: the straggler section from the spread of this rank's steps while N - 1 others
    train beside it: exponential delays of mean (mean step - fastest step), the wait the ranks of a host
    that shares its cores give each other (docs/cost-models.md#stragglers). None alone."""
    steps = m.get("step_ms", [])
    if host is None or len(steps) < 2:
        return []
    mean_ms = statistics.mean(steps) - min(steps)
    if not mean_ms > 0:
        return []
    return ["straggler:   # --ranks-per-host: this rank's steps spread while the others train beside it",
            "  model: jitter", "  distribution: exponential",
            f"  mean_ms: {mean_ms:.6g}   # mean step {statistics.mean(steps):.6g} ms less the fastest "
            f"{min(steps):.6g}, over {len(steps)} steps"]


def _fabric_lines(key, f, latency_us=None, note=""):
    lines = [f"  {key}:", f"    topology: {f['topology']}", f"    bandwidth_GBps: {f['bandwidth_GBps']:.6g}"]
    latency = f["latency_us"] if latency_us is None else latency_us
    lines.append(f"    latency_us: {latency:.6g}" + (f"   # {note}" if note else ""))
    lines.append(f"    duplex: {f['duplex']}")
    if f["topology"] == "fat_tree":
        lines += [f"    nodes_per_switch: {f['nodes_per_switch']}", f"    oversubscription: {f['oversubscription']:.6g}"]
    return lines


def cluster_lines(cluster, source, collective=None):
    """profile --cluster S.yaml: S.yaml's cluster section (as the ddpsim binary hands it over), in place of
    the collective section; with --collective SWEEP, each link's latency is the sweep's fitted fixed cost of
    a ring step (gloo's software and the hop), the bandwidths stay the description's (the emulation's shaping
    holds them, checked)."""
    lines = [f"cluster:   # {source}'s cluster: section", f"  nodes: {cluster['nodes']}",
             f"  gpus_per_node: {cluster['gpus_per_node']}"]
    if cluster["nics_per_node"] != 1:
        lines.append(f"  nics_per_node: {cluster['nics_per_node']}")
    fitted = collective["latency_us"] if collective else None
    note = (f"fitted: a ring step's fixed cost in {collective['path']} ({collective['transport']}, "
            f"W = {collective['world_size']})") if collective else ""
    lines += _fabric_lines("intra", cluster["intra"], fitted, note)
    if cluster.get("inter"):
        lines += _fabric_lines("inter", cluster["inter"], fitted, note)
    return lines


def scenario_yaml(path, m, world_sizes, steps, warmup, collective=None, overhead=None, host=None, bucket_cap_mb=None,
                  hook_lines=(), first_bucket_mb=None, cluster=None, header=None):
    """The scenario's text: every number with a comment saying where it came from. `header`:
    what wrote it, when not `python3 -m ddpsim_torch profile PATH` (ddpsim.torch.profile)."""
    order = m["orders"][0] if m["orders"] else []
    stable = all(o == order for o in m["orders"])
    names = [n for n, _ in m["params"]]
    never = [i for i in range(len(names)) if i not in order]
    lines = [
        f"# Written by `{header or 'python3 -m ddpsim_torch profile ' + path}` (torch {torch.__version__}, "
        f"{m.get('device', 'cpu')}):",
        f"# {steps} measured steps after {warmup} warm-up; times are medians over the steps, "
        f"{m.get('clock', ddp_clock.HostClock.name)}.",
    ] + _host_line(host) + [
        f"name: {json.dumps(path.rsplit('/', 1)[-1].rsplit('.', 1)[0])}",
        f"world_size: [{', '.join(str(w) for w in world_sizes)}]",
        "training:",
        "  iterations: 10",
        "  warmup_iterations: 2",
        f"  local_batch_size: {m['local_batch_size']}   # the recipe's batch: first dimension of its input",
        "model:",
        "  parameters:                 # named_parameters(), registration order",
    ]
    lines += [_tensor_line(n, p) for n, p in m["params"]]
    if m["buffers"]:
        lines.append("  buffers:                    # named_buffers()")
        lines += [_tensor_line(n, b) for n, b in m["buffers"]]
    note = "the same in every measured step" if stable else "from the first measured step (it varied between steps)"
    lines.append(f"  gradient_ready_order:       # gradient-accumulator post-hooks, {note}")
    lines += [f"    - {json.dumps(names[i])}" for i in order + never]
    lines.append("  layers:                     # modules owning parameters; forward: since the previous owner's "
                 "forward ended; backward: since the previous owner's last gradient (medians, ms); activation_MB: "
                 "what autograd saved for backward since the previous owner's forward ended (MiB, one forward)")
    for name, params, fwd, bwd, act in _layers(m, names):
        lines.append(f"    - {{name: {json.dumps(name)}, params: [{', '.join(json.dumps(p) for p in params)}], "
                     f"forward_ms: {fwd:.6g}, backward_ms: {bwd:.6g}, activation_MB: {act / memory.MIB:.6g}}}")
    lines.append(f"  optimizer_ms: {m['optimizer_ms']:.6g}   # optimizer.step() + zero_grad(), median")
    measured_on = "cpu" if m.get("device", "cpu") == "cpu" else "cuda"
    lines.append(f"  measured_on: {measured_on}   # where these times were taken (ddpsim marks CPU times under a GPU cluster)")
    if "optimizer" in m:
        name, cls, state, buffers = m["optimizer"]
        lines.append(f"optimizer: {name}   # torch.optim.{cls}: {buffers} state tensor(s) per parameter, "
                     f"{state} bytes after a step")
    lines += cluster if cluster else _collective_lines(collective)
    lines += jitter_lines(m, host)
    ddp = _overhead_lines(m, overhead)
    if bucket_cap_mb is not None:
        ddp.append(f"  bucket_cap_mb: {bucket_cap_mb:.6g}   # --bucket-cap-mb, as DistributedDataParallel(bucket_cap_mb=...): "
                   "it caps the first bucket too (torch 2.3+)")
    if first_bucket_mb is not None:
        ddp.append(f"  first_bucket_mb: {first_bucket_mb:.6g}   # --first-bucket-mb, as dist._DEFAULT_FIRST_BUCKET_BYTES")
    ddp += list(hook_lines)
    if never:
        ddp += ["  unused_parameters:         # no gradient in any measured step"]
        ddp += [f"    - {json.dumps(names[i])}" for i in never]
    if ddp:
        lines += ["ddp:"] + ddp
    return "\n".join(lines) + "\n"


def _overhead_lines(m, overhead):
    """ddp.bucket_copy_GBps from the one-rank DDP run (overhead.py), with where it came from."""
    if overhead is None:
        return []
    rate, added = overhead["rate"], overhead["added_ms"]
    where = (f"  # DistributedDataParallel on one rank ({overhead['backend']}): backward {overhead['ddp_backward_ms']:.6g} ms against "
             f"{m['total_backward_ms']:.6g} ms bare (medians), forward {overhead['ddp_forward_ms']:.6g} against "
             f"{m['total_forward_ms']:.6g}")
    if rate is None:
        return [where, f"  # DDP added {added:.3g} ms to backward: nothing to charge, ddp.bucket_copy_GBps left out"]
    return [where, f"  # DDP added {added:.6g} ms for 2 x {overhead['gradient_bytes']} gradient bytes copied "
                   "(into the buckets and back)",
            f"  bucket_copy_GBps: {rate:.6g}"]


def run(args):
    if args.device == "cuda" and args.ranks_per_host != 1:
        raise recipes.RecipeError(f"--ranks-per-host {args.ranks_per_host}: for --device cpu only "
                                  "(a GPU rank owns its device)")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise recipes.RecipeError("--device cuda: torch sees no CUDA device here")
    backend = "nccl" if args.device == "cuda" else "gloo"
    options = hooks.parse_options(args.comm_hook, args.hook_option, backend) if args.comm_hook else {}
    if args.hook_option and not args.comm_hook:
        raise hooks.HookError("--hook-option needs --comm-hook")
    contention = overlap.contention_lines(args.overlap) if args.overlap else []
    with corunners.CoRunners(args.recipe, args.ranks_per_host - 1, args.threads) as others:
        m, overhead = _measure_all(args)
        hook_lines = _hook_lines(args, m, overhead, options) if args.comm_hook else []
    host = {"ranks": args.ranks_per_host, "steps": others.steps} if args.ranks_per_host > 1 else None
    collective, cluster = None, None
    buckets = overhead["buckets"] if overhead else None
    if args.cluster:
        described = fabric.cluster_from_environment()
        if described is None:
            raise recipes.RecipeError(f"--cluster {args.cluster}: run it as `ddpsim profile ... --cluster S.yaml`, "
                                      "whose loader reads the scenario's cluster: section")
        if args.collective:
            link = described.get("inter") or described["intra"]
            collective = fit.fit_latency(args.collective, buckets, link["bandwidth_GBps"])
        cluster = cluster_lines(described, args.cluster, collective)
    elif args.collective:
        collective = fit.fit_sweep(args.collective, buckets)
        collective["path"] = args.collective
    text = scenario_yaml(args.recipe, m, args.world_size, args.steps, args.warmup, collective, overhead, host,
                         args.bucket_cap_mb, hook_lines, args.first_bucket_mb, cluster)
    text += "".join(line + "\n" for line in contention)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"profile: {len(m['params'])} parameters in {len(m['owners'])} modules; forward {m['total_forward_ms']:.3f} ms, "
          f"backward {m['total_backward_ms']:.3f} ms, optimizer {m['optimizer_ms']:.3f} ms (medians of {args.steps}); "
          f"wrote {args.out}")
    return 0


def _hook_lines(args, m, overhead, options):
    """ddp.comm_hook: the hook and its options, and the rates of its work timed here (hooks.py) on the
    model's gradients and DDP's buckets (the one-rank run's; one bucket of every gradient with --bare)."""
    params = [p for _, p in m["params"] if p.requires_grad]
    buckets = overhead["buckets"] if overhead and overhead["buckets"] else [sum(p.numel() * 4 for p in params)]
    rates, notes = {}, []
    if args.comm_hook != "allreduce":
        rates, notes = hooks.measure_rates(params, buckets, args.comm_hook, options, args.device, args.threads)
    return hooks.scenario_lines(args.comm_hook, options, rates, notes)


def _measure_all(args):
    """The bare model's measurement and, unless --bare, DDP's own work on one rank."""
    torch.set_num_threads(args.threads)
    built = recipes.to_device(recipes.load(args.recipe), args.device)
    torch.manual_seed(0)
    clock = ddp_clock.for_device(args.device)
    m = measure(built, args.steps, args.warmup, clock)
    m["optimizer"] = memory.optimizer_kind(built["optimizer"])  # after the measured steps: its state exists
    m["activations"], _ = memory.activation_bytes(built)
    m["device"] = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    m["clock"] = clock.name
    overhead = None
    if not args.bare:
        gradient_bytes = sum(p.numel() * p.element_size() for _, p in m["params"] if p.requires_grad)
        fwd, bwd, buckets = ddp_overhead.ddp_times(args.recipe, args.steps, args.warmup, args.device,
                                                   args.bucket_cap_mb, args.first_bucket_mb)
        rate, added = ddp_overhead.bucket_copy(gradient_bytes, m["total_backward_ms"], bwd)
        overhead = {"rate": rate, "added_ms": added, "ddp_forward_ms": fwd, "ddp_backward_ms": bwd,
                    "gradient_bytes": gradient_bytes, "backend": "nccl" if args.device == "cuda" else "gloo",
                    "buckets": buckets}
    return m, overhead
