"""DDP communication hooks: registering PyTorch's own on a real DDP model
(measure --comm-hook), and timing the work they add on one rank (profile
--comm-hook), as the rates ddpsim prices it at: ddp.comm_hook's cast_GBps,
pass_GBps, matmul_GFLOPs and op_us (docs/cost-models.md#communication-hooks).

A hook is named as in ddp.comm_hook: allreduce, fp16_compress, bf16_compress,
powerSGD, batched_powerSGD; PowerSGDState's options as --hook-option
KEY=VALUE in PyTorch's names (matrix_approximation_rank=4,
start_powerSGD_iter=3, ...).
"""
import statistics
import time

NAMES = ("allreduce", "fp16_compress", "bf16_compress", "powerSGD", "batched_powerSGD")
POWERSGD = ("powerSGD", "batched_powerSGD")
# PowerSGDState's options ddpsim models, with their types; PyTorch's defaults otherwise.
OPTIONS = {"matrix_approximation_rank": int, "start_powerSGD_iter": int, "min_compression_rate": float,
           "use_error_feedback": bool, "warm_start": bool, "orthogonalization_epsilon": float}


class HookError(ValueError):
    """A hook or option that cannot be used, and why."""


def _typed(key, text):
    kind = OPTIONS[key]
    if kind is bool:
        if text not in ("true", "false"):
            raise HookError(f"--hook-option {key}={text}: expected true or false")
        return text == "true"
    try:
        return kind(text)
    except ValueError:
        raise HookError(f"--hook-option {key}={text}: expected {'an integer' if kind is int else 'a number'}")


def parse_options(name, pairs, backend):
    """{option: value} from --hook-option KEY=VALUE pairs, checked against the hook and the backend."""
    if name not in NAMES:
        raise HookError(f"--comm-hook {name}: expected one of {', '.join(NAMES)}")
    if name == "bf16_compress" and backend == "gloo":
        raise HookError("--comm-hook bf16_compress: gloo cannot all-reduce bfloat16 ('Invalid scalar type', torch "
                        "1.13); use nccl, or fp16_compress")
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or key not in OPTIONS:
            raise HookError(f"--hook-option {pair}: expected KEY=VALUE, KEY one of {', '.join(OPTIONS)}")
        if name not in POWERSGD:
            raise HookError(f"--hook-option {pair}: a PowerSGDState option; the hook is {name}")
        options[key] = _typed(key, value)
    return options


def check_one_bucket(gradient_bytes, bucket_cap_mb, first_bucket_mb):
    """PowerSGD on gloo with more than one bucket races: a bucket's P and Q all-reduces are launched from
    gloo's worker thread (the previous future's callback) while the backward thread launches the next
    bucket's, and gloo numbers collectives in the order they are called, so two ranks can pair different
    all-reduces and abort ("op.preamble.length <= op.nbytes"; NCCL runs the callbacks where the work is
    launched, in order). Refuses unless every gradient fits one bucket."""
    cap = min(bucket_cap_mb, first_bucket_mb) * (1 << 20)
    if gradient_bytes > cap:
        raise HookError(f"PowerSGD on gloo needs one bucket ({gradient_bytes} gradient bytes; --bucket-cap-mb at least "
                        f"{gradient_bytes / (1 << 20):.4g}, which caps the first bucket too on torch 2.3+; older torch: "
                        "--first-bucket-mb as well): with more, gloo pairs the "
                        "ranks' all-reduces in the order each issues them, which the hook's callbacks race "
                        "(docs/cost-models.md#communication-hooks)")


def register(ddp, name, options):
    """Registers PyTorch's hook `name` on `ddp` (its default process group); returns the hook's state."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    if name in POWERSGD:
        state = powerSGD_hook.PowerSGDState(process_group=None, **options)
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook if name == "powerSGD"
                               else powerSGD_hook.batched_powerSGD_hook)
        return state
    hook = {"allreduce": default_hooks.allreduce_hook, "fp16_compress": default_hooks.fp16_compress_hook,
            "bf16_compress": default_hooks.bf16_compress_hook}[name]
    ddp.register_comm_hook(None, hook)
    return None


def _median_ns(fn, repeats, sync):
    """fn's median time over `repeats` calls, in ns (sync: the device's, around each)."""
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter_ns()
        fn()
        sync()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def _matrices(shapes, rank, min_rate):
    """Of the gradients of these shapes, those powerSGD_hook compresses, as (n, m, r):
    tensor.view(shape[0], -1), _should_compress."""
    out = []
    for shape in shapes:
        numel = 1
        for d in shape:
            numel *= d
        n = shape[0] if shape else 1
        m = max(1, numel // max(1, n))
        r = min(n, m, rank)
        if (n + m) * r * min_rate < n * m:
            out.append((n, m, r))
    return out


def _matmul_rate(measured_ns, shapes, pass_bps, op_ns):
    """The flop rate at which sum max(2 n m r / rate, 4 n m / pass) + op equals the measured products' time
    (bisection: the model's roofline, so its total is the measured one)."""
    def modelled(rate):
        return sum(max(2 * n * m * r / rate, 4 * n * m / pass_bps) * 1e9 + op_ns for n, m, r in shapes)
    if not shapes or modelled(1e18) >= measured_ns:
        return None  # bandwidth- or call-bound throughout: the flop rate does not matter
    lo, hi = 1e6, 1e18
    for _ in range(200):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if modelled(mid) > measured_ns else (lo, mid)
    return hi


def measure_rates(params, buckets, name, options, device, threads=1, world_size=2, repeats=15):
    """The rates of ddp.comm_hook, timed on this device with the model's own gradients, in a fresh
    process (a rank's heap: on CPU a tensor the hook allocates each step is fresh memory, whose first
    touch here costs more than the pass over it): op_us (a tiny in-place op), pass_GBps (add_, copy_,
    subtract into existing tensors over the largest bucket), alloc_GBps (the first touch of a fresh
    tensor that size, beyond the pass), cast_GBps (fp16/bf16_compress's casts into an existing tensor),
    matmul_GFLOPs (PowerSGD's products over the model's compressed matrices, less what the passes and
    calls account for). Returns {key: value}, and notes."""
    import json
    import subprocess
    import sys
    if name == "powerSGD":
        shapes = _matrices([tuple(p.shape) for p in params], options.get("matrix_approximation_rank", 1),
                           options.get("min_compression_rate", 2))
    elif name in POWERSGD:
        rank = options.get("matrix_approximation_rank", 1)
        shapes = [(s, s, rank) for s in (int((b // 4) ** 0.5 + 0.999999) for b in buckets)]
    else:
        shapes = []
    job = {"largest": max(buckets), "name": name, "device": device, "threads": threads, "world_size": world_size,
           "repeats": repeats, "shapes": shapes}
    code = "import json, sys; from ddpsim_torch import hooks; print(json.dumps(hooks._rates(json.loads(sys.argv[1]))))"
    done = subprocess.run([sys.executable, "-c", code, json.dumps(job)], capture_output=True, text=True, check=True,
                          env=_with_package_path())
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["rates"], got["notes"]


def _with_package_path():
    import os
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _rates(job):
    """measure_rates' timing, in the fresh process."""
    import torch
    device, repeats, name = job["device"], job["repeats"], job["name"]
    torch.set_num_threads(job["threads"])
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    n = max(1, job["largest"] // 4)
    x, y, z = torch.randn(n, device=device), torch.randn(n, device=device), torch.randn(n, device=device)
    tiny = torch.ones(1, device=device)
    op_ns = _median_ns(lambda: [tiny.div_(1.0) for _ in range(100)], repeats, sync) / 100
    passes = [_median_ns(lambda: x.add_(y), repeats, sync), _median_ns(lambda: z.copy_(x), repeats, sync),
              _median_ns(lambda: torch.sub(x, y, out=z), repeats, sync)]
    pass_ns = statistics.mean(passes)
    fresh_ns = statistics.mean([_median_ns(lambda: torch.clone(x), repeats, sync),
                                _median_ns(lambda: x - y, repeats, sync)])
    pass_bps = n * 4 / max(1e-9, (pass_ns - op_ns) / 1e9)
    rates = {"op_us": op_ns / 1e3, "pass_GBps": pass_bps / 1e9}
    notes = [f"a fresh process, {job['threads']} torch thread(s): one torch call {op_ns / 1e3:.3g} us (div_ of one "
             f"element); one pass {pass_ns / 1e6:.3g} ms over the largest bucket, {n * 4} bytes (add_, copy_, "
             f"subtract into existing tensors); {fresh_ns / 1e6:.3g} ms into a fresh one (clone, subtract)"]
    if fresh_ns > pass_ns * 1.05:
        rates["alloc_GBps"] = n * 4 / ((fresh_ns - pass_ns) / 1e9) / 1e9
    if name in ("fp16_compress", "bf16_compress"):
        half = torch.float16 if name == "fp16_compress" else torch.bfloat16
        h = x.to(half)
        t_in = _median_ns(lambda: h.copy_(x).div_(job["world_size"]), repeats, sync)
        t_out = _median_ns(lambda: x.copy_(h), repeats, sync)
        rates["cast_GBps"] = 2 * n * 4 / max(1e-9, (t_in + t_out - 3 * op_ns) / 1e9) / 1e9
        notes.append(f"cast {t_in / 1e6:.3g} ms to {half} and divide, {t_out / 1e6:.3g} ms back (existing tensors)")
    if job["shapes"]:
        total = 0
        for n_, m_, r_ in job["shapes"]:
            mat = torch.randn(1, n_, m_, device=device)
            q = torch.randn(1, m_, r_, device=device)
            p = torch.empty(1, n_, r_, device=device)
            total += _median_ns(lambda: torch.bmm(mat, q, out=p), max(3, repeats // 3), sync)
        rate = _matmul_rate(total, job["shapes"], pass_bps, op_ns)
        if rate is not None:
            rates["matmul_GFLOPs"] = rate / 1e9
        notes.append(f"M Q over the {len(job['shapes'])} compressed matrices: {total / 1e6:.3g} ms"
                     + ("" if rate is not None else " (bound by the passes and calls: no flop rate to fit)"))
    return {"rates": rates, "notes": notes}


def scenario_lines(name, options, rates, notes):
    """The scenario's ddp.comm_hook block, every rate with where it came from."""
    if name == "allreduce" and not options:
        return ["  comm_hook: allreduce      # --comm-hook: register_comm_hook(None, allreduce_hook)"]
    lines = ["  comm_hook:                 # --comm-hook: DistributedDataParallel.register_comm_hook",
             f"    name: {name}"]
    lines += [f"    {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()]
    if rates:
        lines += [f"    # {n}" for n in notes]
        # The keys ddp.comm_hook takes for this hook (loader/comm_hook_section.cpp).
        keys = {"fp16_compress": ["op_us", "alloc_GBps", "cast_GBps"],
                "bf16_compress": ["op_us", "alloc_GBps", "cast_GBps"]}.get(
            name, ["op_us", "pass_GBps", "alloc_GBps", "matmul_GFLOPs"] if name in POWERSGD else [])
        lines += [f"    {k}: {rates[k]:.6g}" for k in keys if k in rates]
    return lines
