"""network.cluster: `ddpsim network --cluster S.yaml ... -- COMMAND` (docs/emulated-network.md, "A cluster of hosts").

- descriptions the emulation cannot make are refused with exit 2 and the key (two NICs a node, half
  duplex, no cluster: section, too many ranks, a slow rank past them, no command);
- each rank runs COMMAND in its own host, with torchrun's environment and its own address;
- the exit code is the first failing rank's, and the other ranks are stopped (not left hanging);
- each link is checked and recorded; a two-level cluster's uplink caps what crosses it;
- a host's link is capped in both directions: two senders into one host share its rate (incast);
- --slow-rank caps that host's link; --fault slows a link, takes it down or flaps it mid-run, and --timeout
  names the ranks still running and exits 124;
- nothing is left behind: no network namespace and no process after a run killed midway (SIGKILL and
  SIGTERM) or failed.
Exits 77 (ctest: skipped) where no namespace can be made (not root).

Usage: cluster_test.py DDPSIM_BIN WORK_DIR
"""
import json
import os
import signal
import subprocess
import sys
import time

failures = []
DDPSIM = sys.argv[1]
WORK = sys.argv[2]

TEMPLATE = """name: {name}
world_size: [1]
model: {{preset: resnet18, forward_ms: 10, backward_ms: 20, optimizer_ms: 7}}
cluster:
  nodes: {nodes}
  gpus_per_node: {gpus}
{extra}  intra: {{bandwidth_GBps: {intra}, latency_us: 1{intra_extra}}}
  inter: {{topology: star, bandwidth_GBps: {inter}, latency_us: 5{inter_extra}}}
"""

# Rank 2 receives from ranks 0 and 1 at once and prints the rate it got; they send 1.5 MB each.
INCAST = r"""
import os, socket, time
rank, n = int(os.environ["RANK"]), 1_500_000
if rank == 2:
    s = socket.socket(); s.bind((os.environ["DDPSIM_HOST_ADDR"], 29600)); s.listen(2)
    conns = [s.accept()[0] for _ in range(2)]
    t0, got = time.monotonic(), 0
    for c in conns: c.setblocking(False)
    while got < 2 * n:
        for c in conns:
            try: got += len(c.recv(1 << 20))
            except BlockingIOError: pass
    print(f"incast {got * 8 / (time.monotonic() - t0) / 1e6:.1f} Mbit/s", flush=True)
elif rank < 2:
    time.sleep(0.5)
    c = socket.create_connection(("127.1.2.1", 29600)); c.sendall(bytes(n)); c.close()
"""


# Rank 0 streams to rank 1, which prints the rate of each 0.25 s window (Mbit/s) until --timeout stops it.
STREAM = r"""
import os, socket, time
rank = int(os.environ["RANK"])
if rank == 1:
    s = socket.socket(); s.bind((os.environ["DDPSIM_HOST_ADDR"], 29601)); s.listen(1)
    c = s.accept()[0]; c.settimeout(0.05)
    t, got = time.monotonic(), 0
    while True:
        try: got += len(c.recv(1 << 20))
        except socket.timeout: pass
        if time.monotonic() - t >= 0.25:
            print(f"window {got * 8 / (time.monotonic() - t) / 1e6:.1f}", flush=True); t, got = time.monotonic(), 0
else:
    time.sleep(0.3)
    c = socket.create_connection(("127.1.1.1", 29601)); block = bytes(1 << 16)
    while True: c.sendall(block)
"""


def scenario(name, nodes, gpus, intra=100, inter=0.0125, extra="", intra_extra="", inter_extra=""):
    path = os.path.join(WORK, f"{name}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(TEMPLATE.format(name=name, nodes=nodes, gpus=gpus, intra=intra, inter=inter, extra=extra,
                                intra_extra=intra_extra, inter_extra=inter_extra))
    return path


def network(path, *args, timeout=120):
    return subprocess.run([DDPSIM, "network", "--cluster", path, *args], capture_output=True, text=True,
                          timeout=timeout)


def expect(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""), flush=True)
    if not ok:
        failures.append(what)


def namespaces():
    out = subprocess.run(["lsns", "-t", "net", "-n", "-o", "NS"], capture_output=True, text=True).stdout
    return set(out.split())


def left_behind(marker):
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if marker in line]


def refusals():
    one = scenario("one", 4, 1)
    cases = [("two NICs a node", scenario("nics", 2, 2, extra="  nics_per_node: 2\n"), [], "nics_per_node"),
             ("half duplex", scenario("half", 2, 1, inter_extra=", duplex: half"), [], "duplex half"),
             ("too many ranks", one, ["--ranks", "5"], "--ranks 5"),
             ("a slow rank past them", one, ["--slow-rank", "4:0.5"], "--slow-rank 4"),
             ("no cluster: section", os.path.join(WORK, "none.yaml"), [], "key 'cluster'")]
    with open(cases[-1][1], "w", encoding="utf-8") as f:
        f.write("name: none\nworld_size: [1]\nmodel: {preset: resnet18, forward_ms: 1, backward_ms: 2}\n"
                "collective: {latency_us: 5, bandwidth_GBps: 1}\n")
    for what, path, args, key in cases:
        done = network(path, *args, "--", "true")
        expect(f"refused: {what} (exit 2, '{key}')", done.returncode == 2 and key in done.stderr,
               f"rc {done.returncode}: {done.stderr.strip()}")
    done = network(one)
    expect("refused: no command", done.returncode == 2 and "no command" in done.stderr, done.stderr.strip())


def ranks_and_exit_codes():
    one = scenario("one", 4, 1)
    done = network(one, "--check-out", os.path.join(WORK, "check.json"), "--", "sh", "-c",
                   'echo "env $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $DDPSIM_HOST_ADDR '
                   '$(ip -br -4 addr show eth0 | tr -s " " | cut -d" " -f3)"')
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("env "))
    want = [f"env {r} 0 4 1 127.1.0.1 127.1.{r}.1 127.1.{r}.1/16" for r in range(4)]
    expect("each rank its own host, torchrun's environment", done.returncode == 0 and lines == want,
           f"rc {done.returncode}: {lines} {done.stderr[-300:]}")
    record = json.load(open(os.path.join(WORK, "check.json"), encoding="utf-8"))
    errors = [p["error_pct"] for p in record["checked"]]
    expect("four links checked within 3 % of 100 Mbit/s", len(errors) == 4 and all(abs(e) <= 3 for e in errors),
           str(errors))
    t0 = time.monotonic()
    done = network(one, "--", "sh", "-c", '[ "$RANK" = 2 ] && exit 7; sleep 300')
    took = time.monotonic() - t0
    expect("exit code: the failing rank's (7), the others stopped", done.returncode == 7 and took < 60
           and "rank 2 exited with 7" in done.stdout, f"rc {done.returncode} after {took:.0f} s: {done.stdout}")


def two_levels_and_incast():
    two = scenario("two", 2, 2, intra=0.1, inter=0.025)  # 800 Mbit/s in a node, 200 between nodes
    path = os.path.join(WORK, "two.json")
    done = network(two, "--check-out", path, "--", "true")
    record = json.load(open(path, encoding="utf-8")) if done.returncode == 0 else {"checked": []}
    caps = {(p["from"], p["to"]): p["cap_bps"] for p in record["checked"]}
    expect("two levels: inside a node 800, across the uplink 200 Mbit/s",
           caps == {(0, 1): 800e6, (1, 2): 200e6, (2, 3): 800e6, (3, 0): 200e6}, f"{caps} {done.stderr[-300:]}")
    star = scenario("star", 3, 1, inter=0.0125)  # 100 Mbit/s NICs
    done = network(star, "--", sys.executable, "-c", INCAST)
    got = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("incast")]
    expect("incast: two senders into one host share its 100 Mbit/s", len(got) == 1 and 90 <= got[0] <= 105,
           f"{got} {done.stderr[-300:]}")
    done = network(star, "--slow-rank", "1:0.5", "--check-out", path, "--", "true")
    record = json.load(open(path, encoding="utf-8")) if done.returncode == 0 else {"checked": []}
    slow = [p for p in record["checked"] if p["from"] == 1]
    expect("--slow-rank 1:0.5: its link checked at 50 Mbit/s",
           len(slow) == 1 and slow[0]["cap_bps"] == 50e6 and abs(slow[0]["error_pct"]) <= 3, str(slow))


def faults_midway():
    one = scenario("pair", 2, 1, inter=0.0125)  # 100 Mbit/s NICs
    done = network(one, "--fault", "1.5:slow:0:0.25", "--timeout", "4", "--", sys.executable, "-c", STREAM)
    windows = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("window")]
    early, late = windows[1:4], windows[-4:]
    ratio = (sum(late) / len(late)) / (sum(early) / len(early)) if len(early) == 3 and len(late) == 4 else 0
    expect("--fault 1.5:slow:0:0.25: the stream drops to a quarter, --timeout stops it (exit 124, ranks named)",
           done.returncode == 124 and "rank 0's link at 0.25 of its rate" in done.stdout
           and "rank(s) 0, 1 still running" in done.stdout and 0.2 <= ratio <= 0.3,
           f"rc {done.returncode}, ratio {ratio:.2f}, windows {windows}: {done.stdout[-400:]} {done.stderr[-300:]}")
    done = network(one, "--fault", "1:down:1", "--timeout", "3", "--", sys.executable, "-c", STREAM)
    windows = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("window")]
    expect("--fault 1:down:1: the host cut off, nothing reaches it after", done.returncode == 124
           and "rank 1's link down" in done.stdout and len(windows) >= 8 and max(windows[-4:]) == 0,
           f"rc {done.returncode}, windows {windows}: {done.stdout[-400:]}")
    # Down at 1 s, up at 2 s: TCP retransmits at about 1.2, 1.6 and 2.4 s (its backoff), so it is back by 3 s.
    done = network(one, "--fault", "1:flap:1:1", "--timeout", "4.5", "--", sys.executable, "-c", STREAM)
    windows = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("window")]
    after = windows[4:]
    expect("--fault 1:flap:1:1: the stream stops and comes back as the link goes down and up",
           done.returncode == 124 and "rank 1's link up (flapping)" in done.stdout and 0.0 in after
           and max(after or [0]) > 50, f"rc {done.returncode}, windows {windows}: {done.stdout[-400:]}")
    done = network(one, "--fault", "0:flap:9:1", "--", "true")
    expect("--fault on a rank past the ranks: exit 2", done.returncode == 2 and "--fault 9" in done.stderr,
           done.stderr.strip())


def killed_midway():
    one = scenario("one", 4, 1)
    before = namespaces()
    for sig in (signal.SIGKILL, signal.SIGTERM):
        marker = f"31{sig}.5"  # sleep's argument: this case's rank processes
        p = subprocess.Popen([DDPSIM, "network", "--cluster", one, "--", "sleep", marker], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        line = p.stdout.readline()
        time.sleep(0.5)
        during = len(namespaces() - before)
        p.send_signal(sig)
        p.wait(timeout=30)
        deadline = time.monotonic() + 10
        while (namespaces() - before or left_behind(f"sleep {marker}")) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = namespaces() - before
        expect(f"{signal.Signals(sig).name} midway: 5 namespaces made, none and no rank left",
               "emulated cluster" in line and during == 5 and not left and not left_behind(f"sleep {marker}"),
               f"{line.strip()} during {during}, left {left} {left_behind(f'sleep {marker}')}")


def main():
    os.makedirs(WORK, exist_ok=True)
    if os.geteuid() != 0:
        print("SKIPPED: the emulated cluster needs root")
        return 77
    refusals()
    ranks_and_exit_codes()
    two_levels_and_incast()
    faults_midway()
    killed_midway()
    print("all passed" if not failures else f"FAILED: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
