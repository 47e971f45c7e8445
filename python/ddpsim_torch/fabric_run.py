"""Checking an emulated cluster's links and running a command once per host on it.

The check: each rank sends to its ring successor in turn (a socket transfer
made in the two hosts' namespaces, timed over its last 80 %), which crosses
every host's link both ways and every uplink the ring crosses; the reading
must come within 3 % of the slowest shaped link on the way (the best of up
to three tries: a transfer starved of CPU reads low, none reads past the cap).
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from . import fabric, fabric_build, fabric_mpi, network
from .fabric import FabricError, Layout

TOLERANCE = 0.03
CHECK_S = 0.4  # each transfer: about 0.4 s at the cap


def _socket_in(ns, name):
    """A TCP socket made in host `name`'s namespace (this thread moves there and back)."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        fabric_build.setns_net(ns.path(name))
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    finally:
        fabric_build.setns_net(f"/proc/self/fd/{own}")
        os.close(own)


def transfer(ns, layout, src, dst, nbytes):
    """Bits per second from rank src to rank dst over the transfer's last 80 % (network.timed_transfer)."""
    server = _socket_in(ns, f"host{dst}")
    server.bind((layout.hosts[dst]["address"], 0))
    server.listen(1)
    return network.timed_transfer(server, _socket_in(ns, f"host{src}"), nbytes)


def check(layout, ns):
    """Measure each rank's transfer to the next; raise past TOLERANCE. The check's record."""
    paths = []
    for src in range(layout.ranks if layout.ranks > 1 else 0):
        dst = (src + 1) % layout.ranks
        shaped = [link.rate_bps for link, _ in layout.path(src, dst) if link.rate_bps is not None]
        cap = min(shaped) if shaped else None
        nbytes = int((cap or 2e9) / 8 * CHECK_S)
        measured = 0.0
        for _ in range(3):
            measured = max(measured, transfer(ns, layout, src, dst, nbytes))
            if cap is None or abs(measured / cap - 1) <= TOLERANCE:
                break
        entry = {"from": src, "to": dst, "cap_bps": None if cap is None else round(cap),
                 "measured_bps": round(measured),
                 "error_pct": None if cap is None else round((measured / cap - 1) * 100, 2),
                 "links": [link.name for link, _ in layout.path(src, dst)]}
        paths.append(entry)
        if cap is not None and abs(entry["error_pct"]) > TOLERANCE * 100:
            raise FabricError(f"rank {src} to rank {dst} measured {measured / 1e6:.1f} Mbit/s against the "
                              f"{cap / 1e6:.1f} of its slowest link ({entry['error_pct']:+.1f} %, past "
                              f"{TOLERANCE * 100:.0f} %): the shaping does not hold on this machine")
    record = layout.describe()
    record.update({"faults": layout.faults, "capped": "both directions of every link (tbf on each veth end's egress)",
                   "duplex": "full",
                   "tolerance_pct": TOLERANCE * 100, "checked": paths})
    return record


def describe(record):
    parts = [f"{p['from']}->{p['to']} {p['measured_bps'] / 1e6:.1f}" for p in record["checked"]]
    return (f"emulated cluster of {record['ranks']} host(s) ({record['layout']}), measured (Mbit/s): "
            f"{', '.join(parts) or 'nothing to check with one host'}")


def rank_environment(layout, rank, record_path, port):
    h = layout.hosts[rank]
    local_world = sum(1 for o in layout.hosts if o["node"] == h["node"])
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "DDPSIM_RANK_ADDRS", "DDPSIM_RANK_ADDR", fabric_build.INSIDE):
        env.pop(k, None)
    env.update({
        "RANK": str(rank), "LOCAL_RANK": str(h["local"]), "WORLD_SIZE": str(layout.ranks),
        "LOCAL_WORLD_SIZE": str(local_world), "GROUP_RANK": str(h["node"]), "NODE_RANK": str(h["node"]),
        "MASTER_ADDR": layout.hosts[0]["address"], "MASTER_PORT": str(port),
        "DDPSIM_HOST_ADDR": h["address"], "DDPSIM_NETWORK_CHECK": record_path,
        "GLOO_SOCKET_IFNAME": "eth0", "NCCL_SOCKET_IFNAME": "eth0", "TP_SOCKET_IFNAME": "eth0",
    })
    return env


def make(layout, record_path=None):
    """Build the cluster and check it: (namespaces, record, the record's path)."""
    ns = fabric_build.Namespaces()
    try:
        fabric_build.build(layout, ns)
        record = check(layout, ns)
    except BaseException:
        ns.close()
        raise
    if record_path is None:
        record_path = os.path.join(tempfile.mkdtemp(prefix="ddpsim_cluster."), "check.json")
    with open(record_path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2) + "\n")
    return ns, record, record_path


def _record_applied(record_path, at_s, what):
    """Adds a fault as applied to the check's record (`applied`: its time after the ranks' start, and the
    host's monotonic clock, which StepLog turns into its log's at_ms), replacing the file whole."""
    with open(record_path, encoding="utf-8") as f:
        record = json.load(f)
    record.setdefault("applied", []).append({"at_s": round(at_s, 3), "what": what, "clock_ns": time.monotonic_ns()})
    part = record_path + ".part"
    with open(part, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2) + "\n")
    os.replace(part, record_path)


def _apply_faults(layout, ns, t0, done, record_path=None):
    """The faults, each at its time after t0 (a thread): until `done` is set. Each applied is printed and
    added to the check's record at record_path."""
    links = layout.links_by_name()
    events = []
    for f in layout.faults:
        link = links[f"host{f['rank']}"]
        if f["kind"] == "slow":
            events.append((f["at_s"], lambda link=link, f=f: fabric_build.set_rate(ns, link,
                                                                                     link.rate_bps * f["value"]),
                           f"rank {f['rank']}'s link at {f['value']:g} of its rate"))
        elif f["kind"] == "down":
            events.append((f["at_s"], lambda link=link: fabric_build.set_up(ns, link, False),
                           f"rank {f['rank']}'s link down"))
        else:  # flap: down and up every period, until the ranks end (at most 10,000 times)
            for k in range(10000):
                events.append((f["at_s"] + k * f["value"], lambda link=link, up=k % 2 == 1: fabric_build.set_up(
                    ns, link, up), f"rank {f['rank']}'s link {'up' if k % 2 else 'down'} (flapping)"))
    for at, act, what in sorted(events, key=lambda e: e[0]):
        if done.wait(max(0.0, t0 + at - time.monotonic())):
            return
        act()
        at_s = time.monotonic() - t0
        if record_path:
            _record_applied(record_path, at_s, what)
        print(f"ddpsim network: at {at_s:.1f} s: {what}", flush=True)


def starts(layout, ns, command, record_path, folder, port=29500, mpirun=False):
    """What to start for COMMAND: (name, argv, environment) once a rank, each in its host's namespace with
    torchrun's variables; or, with mpirun, mpirun once in host 0's, starting COMMAND on every host
    (fabric_mpi.py; its rsh agent written in folder)."""
    if mpirun:
        agent = fabric_mpi.write_agent(layout, ns, folder)
        return [("mpirun", fabric_mpi.command(layout, ns, agent, command),
                 fabric_mpi.environment(os.environ, layout, record_path))]
    return [(f"rank {r}", ns.prefix(f"host{r}") + command, rank_environment(layout, r, record_path, port))
            for r in range(layout.ranks)]


def launch(layout, ns, command, record_path, port=29500, grace_s=10.0, timeout_s=None, mpirun=False):
    """COMMAND once a rank, each in its host's namespace (or under mpirun: starts()); the first non-zero exit
    code (0 if none). When one rank fails the others get grace_s to end, then SIGTERM, then SIGKILL (as
    torchrun's agent). Past timeout_s the ranks still running are named and stopped, and the code is 124."""
    t0 = time.monotonic()
    folder = tempfile.mkdtemp(prefix="ddpsim_launch.")
    started = starts(layout, ns, command, record_path, folder, port, mpirun)
    names = [name for name, _, _ in started]
    procs = [subprocess.Popen(argv, env=env) for _, argv, env in started]
    done = threading.Event()
    faults = threading.Thread(target=_apply_faults, args=(layout, ns, t0, done, record_path), daemon=True)
    faults.start()
    first, failed_at = 0, None
    try:
        while [p.poll() for p in procs].count(None) > 0:  # every rank polled (any() would stop at the first)
            for r, p in enumerate(procs):
                if p.returncode not in (None, 0) and first == 0:
                    first, failed_at = p.returncode, time.monotonic()
                    print(f"ddpsim network: {names[r]} exited with {p.returncode}", flush=True)
            if failed_at is not None and time.monotonic() - failed_at > grace_s:
                _stop(procs)
            if timeout_s is not None and time.monotonic() - t0 > timeout_s and first == 0:
                hung = [r for r, p in enumerate(procs) if p.poll() is None]
                what = "mpirun and its ranks" if mpirun else f"rank(s) {', '.join(map(str, hung))}"
                print(f"ddpsim network: timeout after {timeout_s:g} s: {what} still running, stopped", flush=True)
                first = 124
                _stop(procs)
            time.sleep(0.05)
        for r, p in enumerate(procs):
            if p.returncode != 0 and first == 0:
                first = p.returncode
                print(f"ddpsim network: {names[r]} exited with {p.returncode}", flush=True)
    finally:
        done.set()
        _stop(procs)
        shutil.rmtree(folder, ignore_errors=True)
    return first if first >= 0 else 128 - first


def _stop(procs):
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        alive = [p for p in procs if p.poll() is None]
        for p in alive:
            p.send_signal(sig)
        deadline = time.monotonic() + wait_s
        while any(p.poll() is None for p in alive) and time.monotonic() < deadline:
            time.sleep(0.05)


_held = []  # the namespaces of a sweep's or a measure's cluster, for the life of this process


def enter_for(args, ranks):
    """sweep's, measure's and overlap's --cluster, or --network RATE (one switch, a RATE NIC a host): build the
    cluster for `ranks` ranks (in a PID namespace of its own) and set what launch.py's ranks need to join their
    hosts. Words for the verb's closing line."""
    if getattr(args, "network", None):
        cluster = fabric.one_switch(args.network, ranks)
    else:
        cluster = fabric.cluster_from_environment()
    if cluster is None:
        raise FabricError(f"--cluster {args.cluster}: run it as `ddpsim {args.verb} ... --cluster S.yaml`, whose "
                          "loader reads the scenario's cluster: section")
    fabric_build.enter_pid_namespace(sys.argv[1:])
    layout = Layout(cluster, ranks, dict(args.slow_rank or []))
    ns, record, path = make(layout)
    _held.append(ns)
    atexit.register(shutil.rmtree, os.path.dirname(path), True)  # the check's record, read by the ranks until then
    os.environ.update({
        "DDPSIM_NETWORK_CHECK": path, "GLOO_SOCKET_IFNAME": "eth0",
        "DDPSIM_HOST_NETNS": ",".join(ns.path(f"host{r}") for r in range(layout.ranks)),
        "DDPSIM_HOST_ADDRS": ",".join(h["address"] for h in layout.hosts)})
    print(describe(record), flush=True)
    if getattr(args, "network", None):
        return f", on an emulated switch: {ranks} host(s), a {args.network / 1e6:.0f} Mbit/s NIC each"
    return f", on the emulated cluster of {record['layout']}"


def join_host(rank):
    """In a rank that launch.py spawned on an emulated cluster: move it into its host's namespace."""
    paths = os.environ.get("DDPSIM_HOST_NETNS")
    if paths:
        fabric_build.setns_net(paths.split(",")[rank])
        os.environ["DDPSIM_HOST_ADDR"] = os.environ["DDPSIM_HOST_ADDRS"].split(",")[rank]


def run(args, cluster):
    """The `network --cluster` verb."""
    layout = Layout(cluster, args.ranks, dict(args.slow_rank or []), args.fault or [])
    ns, record, path = make(layout, args.check_out)
    try:
        print(describe(record), flush=True)
        return launch(layout, ns, args.command, path, timeout_s=args.timeout, mpirun=args.mpirun)
    finally:
        ns.close()
        if args.check_out is None:  # the record's own folder (make's), not the user's file
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
