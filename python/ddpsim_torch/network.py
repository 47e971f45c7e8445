"""An emulated cluster network on this machine (docs/emulated-network.md).

W ranks on one machine, each as if it were a host behind its own NIC on one
switch: the run gets a private network namespace (unshare(CLONE_NEWNET), as
`unshare -n`), whose loopback is the switch; rank r owns the address
127.0.0.(r + 2), and an htb class per address caps what leaves that address
at RATE (a slow rank's at RATE x FRACTION). Only sending is capped, so each
rank's link is full duplex: it sends at RATE while it receives at up to
RATE from each peer that sends to it (in a ring, one), and what it receives
is capped by the senders' links, not its own (no incast limit).

Programs that connect without binding first (gloo) would send from
127.0.0.1 whatever their rank; the LD_PRELOAD shim libddpsim_netbind.so
(netemu/netbind.cpp) binds each rank's sockets to its address.

Before anything runs, each rank's link is measured: a socket transfer from
its address to an unshaped one, which must come within 3 % of the cap (the
best of up to three tries). The
measured rates are what a run records (DDPSIM_NETWORK_CHECK names the JSON).

Nothing leaves the namespace: it has no device but its loopback, and every
address used is in 127.0.0.0/8.
"""
import ctypes
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

CLONE_NEWNET = 0x40000000
TOLERANCE = 0.03  # the check's bound on |measured / cap - 1|
BURST_S = 0.002  # each link's token bucket: 2 ms at its rate (at least 256 KB)
PORT_BASE, PORT_BLOCK = 16384, 64  # rank r's ports in port mode: PORT_BASE + 64 r .. + 63 (below the ephemeral range)
MAX_RANKS = 254  # addresses 127.0.0.2 .. 127.0.0.255
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}


class NetworkError(Exception):
    """The emulated network cannot be made or does not hold its rate (exit 2)."""


def parse_rate(text):
    """'1gbit', '400mbit', '2.5gbit' (tc's units: k = 1000) -> bits per second."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(bit|kbit|mbit|gbit)", text.strip().lower())
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"'{text}': expected a rate such as 1gbit, 400mbit or 2.5gbit (tc's units: bits per "
                         "second, k = 1000)")
    bps = float(m.group(1)) * _UNITS[m.group(2)]
    if not 1e6 <= bps <= 40e9:
        raise ValueError(f"'{text}': expected a rate from 1mbit to 40gbit (a loopback carries about 40 Gbit/s here)")
    return bps


def parse_slow_rank(text):
    """'R:FRACTION' -> (rank, fraction): rank R's link at FRACTION of the rate (0 < FRACTION <= 1)."""
    m = re.fullmatch(r"([0-9]+):([0-9]*\.?[0-9]+)", text.strip())
    if not m or not 0 < float(m.group(2)) <= 1:
        raise ValueError(f"'{text}': expected R:FRACTION, a rank and the share of the rate its link keeps "
                         "(0 < FRACTION <= 1), such as 1:0.25")
    return int(m.group(1)), float(m.group(2))


class Shaping:
    """W ranks' links: each at rate_bps, the slow ones at their fraction of it."""

    def __init__(self, rate_bps, ranks, slow=None):
        self.rate_bps, self.ranks, self.slow = rate_bps, ranks, dict(slow or {})
        if not 1 <= ranks <= MAX_RANKS:
            raise NetworkError(f"--ranks {ranks}: expected 1 to {MAX_RANKS} (one address a rank, 127.0.0.2 up)")
        bad = [r for r in self.slow if r >= ranks]
        if bad:
            raise NetworkError(f"--slow-rank {bad[0]}: expected a rank below the {ranks} ranks")

    @staticmethod
    def address(rank):
        return f"127.0.0.{rank + 2}"

    def addresses(self):
        return [self.address(r) for r in range(self.ranks)]

    def cap(self, rank):
        return self.rate_bps * self.slow.get(rank, 1.0)


def _run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise NetworkError(f"'{' '.join(cmd)}' failed: {done.stderr.strip() or done.returncode}")


def _unshare():
    if shutil.which("tc") is None or shutil.which("ip") is None:
        raise NetworkError("the emulated network needs iproute2's tc and ip (apt-get install iproute2)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetworkError(f"cannot make a private network namespace (unshare(CLONE_NEWNET): {os.strerror(err)}); "
                           "the emulated network needs root, or CAP_SYS_ADMIN and CAP_NET_ADMIN in a container")


def _kbit(bps):
    return f"{bps / 1e3:.0f}kbit"


def configure(shaping):
    """In this (new) namespace: loopback up, one address and one htb class per rank."""
    _run(["ip", "link", "set", "lo", "up"])
    _run(["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "0"])
    for r, addr in enumerate(shaping.addresses()):
        _run(["ip", "addr", "add", f"{addr}/8", "dev", "lo"])  # listed by getifaddrs: MPI's TCP interface
        cls = f"1:{10 + r:x}"
        # burst: 2 ms at the link's rate, and at least 256 KB, four of loopback's 64 KiB segments (htb
        # releases no less than a segment at a time and its timer is coarser than a segment at 1 Gbit/s);
        # quantum: one segment.
        burst = f"{max(256 << 10, int(shaping.cap(r) / 8 * BURST_S))}b"
        _run(["tc", "class", "add", "dev", "lo", "parent", "1:", "classid", cls, "htb", "rate", _kbit(shaping.cap(r)),
              "ceil", _kbit(shaping.cap(r)), "burst", burst, "cburst", burst, "quantum", "65536"])
        _run(["tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
              "src", f"{addr}/32", "flowid", cls])
        # Port mode (Open MPI: every rank on 127.0.0.1, known by its block of ports; netemu/netbind.cpp).
        _run(["tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "2", "u32", "match", "ip",
              "src", "127.0.0.1/32", "match", "ip", "sport", str(PORT_BASE + PORT_BLOCK * r),
              f"0x{0x10000 - PORT_BLOCK:x}", "flowid", cls])


def timed_transfer(server, client, nbytes):
    """nbytes from `client` (a socket, unconnected) to `server` (bound and listening; both closed after): the
    receiver's rate in bits per second over the transfer's last 80 % (the first 20 % holds TCP's slow start
    and the shaper's burst). fabric_run.py's check uses it too, its sockets made in two hosts' namespaces."""
    result = {}

    def receive():
        conn, _ = server.accept()
        got, start, buf = 0, None, bytearray(1 << 20)
        while got < nbytes:
            n = conn.recv_into(buf)
            if not n:
                break
            got += n
            if start is None and got >= nbytes // 5:
                start = (time.monotonic(), got)
        if start:
            result["bps"] = (got - start[1]) * 8 / max(1e-9, time.monotonic() - start[0])
        conn.close()

    t = threading.Thread(target=receive)
    t.start()
    client.settimeout(60)
    client.connect(server.getsockname())
    client.sendall(bytes(nbytes))
    client.close()
    t.join()
    server.close()
    return result.get("bps", 0.0)


def _transfer(src, seconds_at_cap, cap_bps):
    """A socket transfer from src to 127.0.0.1 (unshaped): timed_transfer's rate."""
    nbytes = max(4 << 20, int(cap_bps / 8 * seconds_at_cap))
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.bind((src, 0))
    return timed_transfer(server, client, nbytes)


def check(shaping, seconds_at_cap=0.6):
    """Measure each rank's link; raise past TOLERANCE. The check's record (JSON-ready)."""
    links = []
    for r, addr in enumerate(shaping.addresses()):
        # A transfer starved of CPU by another process reads low; none reads past the cap once its burst is
        # spent. So a link is measured up to three times and keeps its best reading.
        measured = 0.0
        for _ in range(3):
            measured = max(measured, _transfer(addr, seconds_at_cap, shaping.cap(r)))
            if abs(measured / shaping.cap(r) - 1) <= TOLERANCE:
                break
        links.append({"rank": r, "address": addr, "cap_bps": shaping.cap(r), "measured_bps": round(measured),
                      "error_pct": round((measured / shaping.cap(r) - 1) * 100, 2)})
    record = {"rate_bps": shaping.rate_bps, "ranks": shaping.ranks, "capped": "egress (each rank's sending)",
              "duplex": "full", "tolerance_pct": TOLERANCE * 100, "links": links}
    worst = max(links, key=lambda link: abs(link["error_pct"]))
    if abs(worst["error_pct"]) > TOLERANCE * 100:
        raise NetworkError(f"rank {worst['rank']}'s link ({worst['address']}) measured {worst['measured_bps'] / 1e6:.1f} "
                           f"Mbit/s against its cap of {worst['cap_bps'] / 1e6:.1f} ({worst['error_pct']:+.1f} %, past "
                           f"{TOLERANCE * 100:.0f} %): the shaping does not hold on this machine")
    return record


def netbind_library():
    """The shim's path: $DDPSIM_NETBIND, else the installed one (lib/ddpsim), else built from
    netemu/netbind.cpp into a temporary folder."""
    given = os.environ.get("DDPSIM_NETBIND")
    if given:
        if not os.path.isfile(given):
            raise NetworkError(f"DDPSIM_NETBIND={given}: no such file (cmake builds it as netemu/libddpsim_netbind.so)")
        return given
    # Installed (cmake --install): the package under P/share/ddpsim/python, the shim in P/lib/ddpsim.
    installed = os.path.normpath(os.path.join(ROOT, "..", "..", "lib", "ddpsim", "libddpsim_netbind.so"))
    if os.path.isfile(installed):
        return installed
    source = os.path.join(ROOT, "netemu", "netbind.cpp")
    out = os.path.join(tempfile.mkdtemp(prefix="ddpsim_netbind."), "libddpsim_netbind.so")
    done = subprocess.run(["c++", "-std=c++20", "-O2", "-shared", "-fPIC", "-o", out, source, "-ldl"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise NetworkError(f"cannot build {source} ({done.stderr.strip()}); set DDPSIM_NETBIND to the built "
                           "netemu/libddpsim_netbind.so")
    return out


def enter(shaping, record_path=None):
    """Move this process into a new shaped namespace, check it, and set the environment its children need.
    Returns the check's record; writes it to record_path (or a temporary file) for the ranks to read."""
    shim = netbind_library()
    _unshare()
    configure(shaping)
    record = check(shaping)
    if record_path is None:
        record_path = os.path.join(tempfile.mkdtemp(prefix="ddpsim_network."), "check.json")
    with open(record_path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2) + "\n")
    preload = os.environ.get("LD_PRELOAD", "")
    os.environ.update({
        "LD_PRELOAD": f"{shim} {preload}".strip(),
        "DDPSIM_RANK_ADDRS": ",".join(shaping.addresses()),
        "DDPSIM_NETWORK": f"{shaping.rate_bps:.0f}",
        "DDPSIM_NETWORK_RANKS": str(shaping.ranks),
        "DDPSIM_NETWORK_CHECK": record_path,
        "DDPSIM_RANK_PORTS": f"{PORT_BASE}:{PORT_BLOCK}",
        "OMPI_MCA_oob_tcp_if_include": "lo",  # mpirun's own wire-up: the namespace has no other device
    })
    return record


def current_record():
    """The check of the emulated network this process runs in, or None outside one."""
    path = os.environ.get("DDPSIM_NETWORK_CHECK")
    if not path:
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_recorded(doc, path):
    """Writes a measurement's JSON to `path`, with the emulated network's check as "network" when in one."""
    record = current_record()
    if record:
        doc["network"] = record
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=2) + "\n")


def describe(record):
    links = ", ".join(f"rank {link['rank']} {link['measured_bps'] / 1e6:.1f}" for link in record["links"])
    return f"emulated network at {record['rate_bps'] / 1e6:.0f} Mbit/s a rank, measured (Mbit/s): {links}"


def enter_for(args, ranks):
    """sweep's, measure's and overlap's --network RATE or --cluster S.yaml, and --slow-rank: build the cluster
    of hosts for `ranks` ranks (fabric_run.py; --network RATE is its one-switch shorthand), or not. Words for
    the verb's closing line. (The loopback emulation below is the `network RATE` verb's, for launchers such as
    mpirun that start every rank in one namespace.)"""
    if not (getattr(args, "cluster", None) or getattr(args, "network", None)):
        return ""
    from . import fabric_run
    return fabric_run.enter_for(args, ranks)


def run(args):
    """The `network` verb: run a command (a launcher and its ranks) inside the emulated network."""
    if not args.command:
        raise NetworkError("no command to run: network RATE --ranks W -- COMMAND ...")
    enter(Shaping(args.rate, args.ranks, dict(args.slow_rank or [])), args.check_out)
    print(describe(current_record()), flush=True)
    return subprocess.run(args.command).returncode
