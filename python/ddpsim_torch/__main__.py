"""python3 -m ddpsim_torch VERB ...: the command line (python/README.md)."""
import argparse
import signal
import sys

from . import fabric, fit, hooks, network, recipe


def _world_sizes(text):
    try:
        sizes = [int(w) for w in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected world sizes such as 1,2,8")
    if not sizes or any(w < 1 for w in sizes) or len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"'{text}': expected distinct world sizes >= 1")
    return sizes


def _at_least(lo):
    """An argparse type: an integer >= lo."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}': expected an integer")
        if v < lo:
            raise argparse.ArgumentTypeError(f"'{text}': expected an integer >= {lo}")
        return v
    return parse


_positive, _non_negative = _at_least(1), _at_least(0)


def _positive_number(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected a number")
    if not v > 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a number > 0")
    return v


def _argparse_type(parse):
    """An argparse type from a parser that raises ValueError with its message."""
    def wrapped(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return wrapped


def _network_options(p):
    p.add_argument("--network", type=_argparse_type(network.parse_rate), metavar="RATE",
                   help="run the ranks on an emulated network: each a host whose link sends at RATE (1gbit, "
                        "400mbit, ...), in a private network namespace (root; docs/emulated-network.md)")
    p.add_argument("--cluster", metavar="S.yaml",
                   help="run the ranks on an emulated cluster of hosts as S.yaml's cluster: section describes it "
                        "(root; docs/emulated-network.md)")
    p.add_argument("--slow-rank", type=_argparse_type(network.parse_slow_rank), action="append", metavar="R:FRACTION",
                   help="with --network or --cluster: rank R's link at FRACTION of its rate (a slow NIC); repeatable")


def _hook_options(p, what):
    from . import hooks
    p.add_argument("--comm-hook", choices=hooks.NAMES, metavar="NAME", help=f"{what}: {', '.join(hooks.NAMES)}")
    p.add_argument("--hook-option", action="append", metavar="KEY=VALUE",
                   help="a PowerSGDState option in PyTorch's name (matrix_approximation_rank=4, "
                        "start_powerSGD_iter=3, ...); repeatable")


def _network_verb(n, args, argv):
    if (args.rate is None) == (args.cluster is None):
        n.error("give RATE (one switch) or --cluster S.yaml, not both")
    if args.cluster is None:
        if args.ranks is None:
            n.error("RATE needs --ranks W")
        if not args.mpirun:
            if args.fault or args.timeout:
                n.error("--fault and --timeout need --cluster or --mpirun")
            return network.run(args)
    if not args.command:
        raise fabric.FabricError("no command to run: network --cluster S.yaml -- COMMAND ...")
    cluster = fabric.one_switch(args.rate, args.ranks) if args.cluster is None else fabric.cluster_from_environment()
    if cluster is None:
        raise fabric.FabricError(f"--cluster {args.cluster}: run it as `ddpsim network --cluster ...`, whose loader "
                                 "reads the scenario's cluster: section")
    from . import fabric_build, fabric_run
    fabric_build.enter_pid_namespace(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return fabric_run.run(args, cluster)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ddpsim_torch", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("profile", help="run a recipe on one device and write a ddpsim scenario of it")
    p.add_argument("recipe", help="a Python file defining build() (python/recipes/ has examples)")
    p.add_argument("--out", required=True, help="the scenario YAML to write")
    p.add_argument("--world-size", type=_world_sizes, default=[1, 2, 8], help="world sizes to predict (default 1,2,8)")
    p.add_argument("--steps", type=_positive, default=10, help="measured steps (default 10)")
    p.add_argument("--warmup", type=_non_negative, default=3, help="steps run before measuring (default 3)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cpu (host clock) or cuda (the current GPU, CUDA events; DDP's own work under nccl)")
    p.add_argument("--threads", type=_positive, default=1, help="torch threads on cpu (default 1, as each measured rank)")
    p.add_argument("--collective", help="an all-reduce sweep (the sweep verb's JSON): fit the collective section to it")
    p.add_argument("--cluster", metavar="S.yaml",
                   help="write S.yaml's cluster: section in place of the collective section (with --collective, "
                        "each link's latency fitted to the sweep); the emulated cluster's own description")
    p.add_argument("--ranks-per-host", type=_positive, default=1,
                   help="cpu: profile with N - 1 other processes training the recipe beside it, as the other "
                        "ranks of a host would (default 1: alone)")
    p.add_argument("--bucket-cap-mb", type=_positive_number, default=None,
                   help="DistributedDataParallel's bucket_cap_mb for the one-rank DDP run and the scenario (default: "
                        "not passed, DDP's 25; given, it caps the first bucket too on torch 2.3+)")
    p.add_argument("--overlap", metavar="F.json",
                   help="the overlap verb's JSON: write its contention: section (compute and communication slowed "
                        "while they run at once), measured apart from this recipe")
    p.add_argument("--bare", action="store_true",
                   help="skip the one-rank DistributedDataParallel run that measures DDP's own work")
    s = verbs.add_parser("sweep", help="time all-reduces on W processes; write the sweep ddpsim calibrate reads")
    s.add_argument("--world-size", type=_positive, required=True, help="processes (ranks) to spawn")
    s.add_argument("--backend", choices=["gloo", "nccl"], default="gloo", help="gloo on cpu, nccl on one GPU per rank")
    s.add_argument("--out", required=True, help="the sweep JSON to write")
    s.add_argument("--min-bytes", type=_positive, default=8, help="smallest size (default 8)")
    s.add_argument("--max-bytes", type=_positive, default=256 << 20, help="largest size (default 256 MiB)")
    s.add_argument("--iters", type=_positive, default=5, help="timed calls per size (default 5)")
    s.add_argument("--stat", choices=["mean", "median"], default="mean",
                   help="a size's time: the mean of its calls (default, as nccl-tests and a measured step) or median")
    m = verbs.add_parser("measure", help="train a recipe under real DistributedDataParallel on W ranks; write "
                                         "PREFIX.rank<r>.json, the logs ddpsim validate reads")
    m.add_argument("recipe", help="a Python file defining build()")
    m.add_argument("--world-size", type=_positive, required=True, help="processes (ranks) to spawn")
    m.add_argument("--backend", choices=["gloo", "nccl"], default="gloo", help="gloo on cpu, nccl on one GPU per rank")
    m.add_argument("--steps", type=_positive, default=12, help="iterations to log (default 12)")
    m.add_argument("--threads", type=_positive, default=1, help="torch threads per rank on cpu (default 1)")
    m.add_argument("--out", required=True, help="the logs' prefix: PREFIX.rank<r>.json")
    m.add_argument("--bucket-cap-mb", type=_positive_number, default=None,
                   help="DistributedDataParallel's bucket_cap_mb (default: not passed, DDP's 25; given, it caps the "
                        "first bucket too on torch 2.3+)")
    for v in (p, m):
        v.add_argument("--first-bucket-mb", type=_positive_number, default=None,
                       help="DDP's first rebuilt bucket's cap, dist._DEFAULT_FIRST_BUCKET_BYTES (default 1; under "
                            "DDP's default cap only on torch 2.3+)")
    _hook_options(p, "time the work of DDP's communication hook NAME on one rank and write it as ddp.comm_hook")
    _hook_options(m, "register DDP's communication hook NAME (PyTorch's own) on every rank")
    o = verbs.add_parser("overlap", help="gloo on cpu: compute and an all-reduce alone and at once on W ranks; write "
                                         "how much each slows the other (the contention section profile and "
                                         "calibrate take with --overlap)")
    o.add_argument("--world-size", type=_at_least(2), default=2,
                   help="processes (ranks) to spawn, 2 or more: one rank has nothing to overlap (default 2)")
    o.add_argument("--out", required=True, help="the overlap JSON to write")
    o.add_argument("--mb", type=_positive_number, nargs="+", default=[1, 25],
                   help="all-reduce sizes in MiB, like a bucket's (default 1 25)")
    o.add_argument("--matrix", type=_positive, default=128, help="a compute chunk: one N x N float32 product (default 128)")
    o.add_argument("--chunks", type=_positive, default=50, help="chunks timed alone per rep (default 50)")
    o.add_argument("--reps", type=_positive, default=7, help="repetitions per size; medians (default 7)")
    o.add_argument("--threads", type=_positive, default=1, help="torch threads per rank (default 1, as measure's)")
    _network_options(s)
    _network_options(m)
    _network_options(o)
    n = verbs.add_parser("network", help="run a command (torchrun, mpirun, ...) on an emulated network: each rank a "
                                         "host behind a RATE link (docs/emulated-network.md)")
    n.add_argument("rate", nargs="?", type=_argparse_type(network.parse_rate),
                   help="one switch on a loopback: each rank's link, 1gbit, 400mbit, ... (or --cluster)")
    n.add_argument("--cluster", metavar="S.yaml",
                   help="a cluster of hosts as S.yaml's cluster: section describes it (namespaces, bridges, "
                        "shaped veths; docs/emulated-network.md)")
    n.add_argument("--ranks", type=_positive, help="ranks (with --cluster: default nodes x gpus_per_node)")
    n.add_argument("--slow-rank", type=_argparse_type(network.parse_slow_rank), action="append", metavar="R:FRACTION",
                   help="rank R's link at FRACTION of RATE (a slow NIC); repeatable")
    n.add_argument("--check-out", help="write the shaping check (each link's measured rate) here as JSON")
    n.add_argument("--fault", type=_argparse_type(fabric.parse_fault), action="append", metavar="AT:KIND:R[:X]",
                   help="with --cluster, mid-run: AT:slow:R:FRACTION (rank R's link slows to FRACTION of its rate), "
                        "AT:down:R (its link goes down), AT:flap:R:PERIOD (down and up every PERIOD s); AT: seconds "
                        "after the ranks start; repeatable")
    n.add_argument("--timeout", type=_positive_number, metavar="S",
                   help="with --cluster: stop the ranks still running after S seconds, name them, exit 124")
    n.add_argument("--mpirun", action="store_true",
                   help="start COMMAND under Open MPI's mpirun, one rank a host (mpirun in host 0, a daemon a host "
                        "through an rsh agent; MPI's TCP over the hosts' links); with RATE, on a switch of hosts")
    n.epilog = "The command follows a --: network 1gbit --ranks 2 -- torchrun --nproc_per_node 2 train.py"
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(command) - (1 if "--" in argv else 0)])
    if args.verb == "network":
        args.command = command
        try:
            return _network_verb(n, args, argv)
        except (network.NetworkError, fabric.FabricError) as e:
            print(f"ddpsim_torch: error: {e}", file=sys.stderr)
            return 2
    if getattr(args, "slow_rank", None) and not (args.network or args.cluster):
        parser.error("--slow-rank needs --network or --cluster")
    if getattr(args, "network", None) and getattr(args, "cluster", None):
        parser.error("--network RATE (one switch) or --cluster S.yaml, not both")
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"ddpsim_torch: torch is not installed for {sys.executable} ({e}); install the pins "
              f"(pip install -r requirements.txt beside ddpsim_torch/; scripts/setup.sh in a checkout)", file=sys.stderr)
        return 2
    from . import measure, memory, overlap, overlap_bench, profile, sweep
    try:
        if args.verb == "overlap":
            return overlap_bench.run(args)
        if args.verb == "profile":
            return profile.run(args)
        if args.verb == "sweep":
            return sweep.run(args)
        if args.verb == "measure":
            return measure.run(args)
    except (recipe.RecipeError, fit.FitError, network.NetworkError, fabric.FabricError, hooks.HookError,
            memory.OptimizerError, overlap.OverlapError) as e:
        print(f"ddpsim_torch: error: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
