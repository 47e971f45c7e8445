"""measure: train a recipe under real DistributedDataParallel on W ranks and
write each rank's log, PREFIX.rank<r>.json, in ddpsim-real's measured-run
format (formats/measured_run.hpp: RankLog), which `ddpsim validate` and
`ddpsim calibrate` read.

Per iteration, from the host clock (time.monotonic_ns, CLOCK_MONOTONIC on
Linux, the clock ddpsim-real's backward_end_clock_ms uses) and DDP's own
timers (_get_ddp_logging_data at sample rate 1):
- step_ms: the batch taken to the optimizer step's end (zero_grad included);
- forward_compute_ms: DDP's forward timer plus the loss (host);
- backward_compute_ms: DDP's backward compute timer less the loss; DDP
  starts it where its forward returns (Reducer::prepare_for_backward) and
  stops it when autograd's last gradient is ready;
- backward_end_clock_ms: where DDP's forward returned plus its backward
  compute time;
- exposed_comm_ms: from there to loss.backward()'s return (finalize_backward
  waits for the buckets and copies them out), waiting for other ranks included;
- collective_ms / backward_comm_ms, backward_overlap_ms: DDP's comm and
  overlap timers;
- optimizer_ms: optimizer.step() and zero_grad(), host.
With --comm-hook NAME (--hook-option KEY=VALUE for PowerSGDState), PyTorch's
own hook is registered on the model (hooks.py) and named in each log
("comm_hook": {"name", "options"}).
DDP's timers describe the previous iteration: they are read after the next
iteration's forward, and that read's time is taken out of the step. So one
step more than --steps is run, and the last is not written.
"""
import socket
import time

import torch

from . import hooks, launch, network
from . import recipe as recipes


def _ms(ns):
    return ns / 1e6


def _ints(text):
    """DDP's logging data lists ints as "1, 2, 3" (or one int)."""
    text = str(text).strip()
    return [int(s) for s in text.split(",")] if text else []


def _stats(ddp):
    d = ddp._get_ddp_logging_data()
    return {k: d.get(k, 0) for k in ("forward_compute_time", "backward_compute_time", "backward_comm_time",
                                     "backward_compute_comm_overlap_time")}, d


def _train(ddp, built, steps, device):
    """Per iteration: host marks (ns) and DDP's timers for it; and the last logging data."""
    (inputs, targets), loss_fn, optimizer = built["batch"], built["loss_fn"], built["optimizer"]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    marks, stats, data = [], [], None
    for it in range(steps + 1):
        t0 = time.monotonic_ns()
        x, y = inputs, targets
        t_data = time.monotonic_ns()
        out = recipes.call_model(ddp, x)
        t_fwd = time.monotonic_ns()
        if it > 0:
            s, data = _stats(ddp)  # the previous iteration's timers
            stats.append(s)
        t_read = time.monotonic_ns()
        loss = loss_fn(out, y)
        t_loss = time.monotonic_ns()
        loss.backward()
        sync()
        t_bwd = time.monotonic_ns()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync()
        t_end = time.monotonic_ns()
        marks.append((t0, t_data, t_fwd, t_read - t_fwd, t_loss, t_bwd, t_end))
    return marks[:steps], stats, data


def _step(it, batch, mark, s):
    t0, t_data, t_fwd, read, t_loss, t_bwd, t_end = mark
    loss = t_loss - t_fwd - read
    bwd_ddp = s["backward_compute_time"] - read  # DDP's span held the read of the previous timers
    backward_end = t_fwd + s["backward_compute_time"]
    fwd = s["forward_compute_time"] + loss
    bwd = max(0, bwd_ddp - loss)
    return {
        "iteration": it, "epoch": 0, "examples": batch, "skipped": False,
        "data_ms": _ms(t_data - t0),
        "compute_ms": _ms(fwd + bwd),
        "collective_ms": _ms(s["backward_comm_time"]),
        "exposed_comm_ms": _ms(max(0, t_bwd - backward_end)),
        "wait_ms": None,
        "forward_compute_ms": _ms(fwd),
        "backward_compute_ms": _ms(bwd),
        "backward_comm_ms": _ms(s["backward_comm_time"]),
        "backward_overlap_ms": _ms(s["backward_compute_comm_overlap_time"]),
        "optimizer_ms": _ms(t_end - t_bwd),
        "step_ms": _ms(t_end - t0 - read),
        "backward_end_clock_ms": _ms(backward_end),
        "layer_forward_ms": [],
        "layer_backward_ms": [],
    }


def _rank_main(rank, world, recipe_path, steps, threads, out, backend, bucket_cap_mb=None, hook=None,
               first_bucket_mb=None):
    device = "cuda" if backend == "nccl" else "cpu"
    if device == "cpu":
        torch.set_num_threads(threads)
    built = recipes.to_device(recipes.load(recipe_path), device)
    ddp = torch.nn.parallel.DistributedDataParallel(built["model"], device_ids=[torch.cuda.current_device()]
                                                    if device == "cuda" else None,
                                                    **recipes.ddp_bucket_args(bucket_cap_mb, first_bucket_mb))
    ddp._set_ddp_runtime_logging_sample_rate(1)
    if hook:
        hooks.register(ddp, hook["name"], hook["options"])
    marks, stats, data = _train(ddp, built, steps, device)
    batch = recipes.batch_size(built["batch"][0])
    names = [n for n, _ in ddp.module.named_parameters()]
    trainable = [p for p in ddp.module.parameters() if p.requires_grad]
    buckets = data["rebuilt_bucket_sizes"] if data.get("has_rebuilt_buckets") else data["bucket_sizes"]
    log = {
        "rank": rank, "world_size": world, "host": socket.gethostname(),
        "ddpsim_version": f"ddpsim_torch (torch {torch.__version__})", "git_commit": "",
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "transport": f"torch {backend}",
        "sizes": {"widths": "", "parameters": sum(p.numel() for p in ddp.module.parameters()),
                  "gradient_bytes": sum(p.numel() * p.element_size() for p in trainable),
                  "bucket_bytes": _ints(buckets), "dataset_size": batch * world * steps},
        "gradient_ready_order": [names[i] for i in _ints(data["prev_iteration_grad_ready_order_indices"])],
        "batch_size": batch,
        "resumed_from_step": -1,
        "epochs": [],
        "steps": [_step(it, batch, marks[it], stats[it]) for it in range(steps)],
    }
    if hook:
        log["comm_hook"] = hook
    network.write_recorded(log, f"{out}.rank{rank}.json")
    # Every rank done before the group is torn down: a comm hook's chained futures (PowerSGD's) still
    # running on gloo's threads at destroy_process_group abort the process ("terminate called without
    # an active exception", seen once in ten runs).
    torch.distributed.barrier()
    del ddp


def run(args):
    recipes.load(args.recipe)  # a bad recipe is refused here, not in W processes
    recipes.ddp_bucket_args(args.bucket_cap_mb, args.first_bucket_mb)  # and bad bucket arguments
    hook = None
    if args.comm_hook:  # a bad hook too
        hook = {"name": args.comm_hook, "options": hooks.parse_options(args.comm_hook, args.hook_option, args.backend)}
    elif args.hook_option:
        raise hooks.HookError("--hook-option needs --comm-hook")
    if hook and args.backend == "gloo" and hook["name"] in hooks.POWERSGD:
        hooks.check_one_bucket(recipes.gradient_bytes(recipes.load(args.recipe)),
                               25.0 if args.bucket_cap_mb is None else args.bucket_cap_mb,
                               recipes.first_bucket_mb(args.bucket_cap_mb, args.first_bucket_mb))
    where = network.enter_for(args, args.world_size)
    launch.run_ranks(_rank_main, args.world_size, args.backend, args.recipe, args.steps, args.threads, args.out,
                     args.backend, args.bucket_cap_mb, hook, args.first_bucket_mb)
    with_hook = f", comm hook {args.comm_hook}" if hook else ""
    print(f"measure: {args.recipe} under DistributedDataParallel, {args.world_size} ranks, {args.backend}{with_hook}, "
          f"{args.steps} steps{where}; wrote {args.out}.rank<r>.json")
    return 0
