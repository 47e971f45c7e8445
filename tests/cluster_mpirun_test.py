"""network.cluster_mpirun: `ddpsim network ... --mpirun -- COMMAND` (docs/emulated-network.md, "MPI on the
cluster of hosts").

- each rank runs on its own host: Open MPI's rank r in host r's namespace, named hostr, with that host's
  address (DDPSIM_HOST_ADDR, eth0's), on a two-level cluster;
- MPI's bytes cross the emulated links: a 4 MiB all-reduce of ddpsim-real between two 100 Mbit/s hosts takes
  at least the time the link needs for it (on the unshaped machine it takes about a millisecond);
- the exit code is the failing rank's;
- nothing is left behind: no network namespace, daemon (orted) or rank after a run killed midway.
Exits 77 (ctest: skipped) where no namespace can be made (not root).

Usage: cluster_mpirun_test.py DDPSIM_BIN DDPSIM_REAL WORK_DIR
"""
import json
import os
import signal
import subprocess
import sys
import time

import cluster_test
from cluster_test import expect, left_behind, namespaces, scenario

DDPSIM, REAL, WORK = sys.argv[1:4]


def run(*args, timeout=180):
    return subprocess.run([DDPSIM, "network", *args], capture_output=True, text=True, timeout=timeout)


def each_rank_its_host():
    two = scenario("two", 2, 2, intra=0.1, inter=0.0125)
    done = run("--cluster", two, "--mpirun", "--", "sh", "-c",
               'echo "host $OMPI_COMM_WORLD_RANK $(hostname) $DDPSIM_HOST_ADDR '
               '$(ip -br -4 addr show eth0 | tr -s " " | cut -d" " -f3)"')
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("host "))
    want = [f"host {r} host{r} 127.1.{r // 2}.{r % 2 + 1} 127.1.{r // 2}.{r % 2 + 1}/16" for r in range(4)]
    expect("under mpirun each rank on its own host (its name, its address)", done.returncode == 0 and lines == want,
           f"rc {done.returncode}: {lines} {done.stderr[-400:]}")


def bytes_cross_the_links():
    n, rate = 4 << 20, 100e6
    out = os.path.join(WORK, "sweep.json")
    done = run("100mbit", "--ranks", "2", "--mpirun", "--", REAL, "allreduce-sweep", "--min-bytes", str(n),
               "--max-bytes", str(n), "--iters", "2", "--json", out)
    rows = json.load(open(out, encoding="utf-8"))["sweep"] if done.returncode == 0 else []
    link_s = n * 8 / rate  # one direction's bytes of a ring or a reduce-then-broadcast at W = 2
    took = rows[0]["time_us"] / 1e6 if rows else 0
    expect(f"a 4 MiB MPI all-reduce at 100 Mbit/s takes at least the link's {link_s:.3f} s",
           done.returncode == 0 and 0.95 * link_s <= took <= 2.5 * link_s,
           f"rc {done.returncode}, {took:.3f} s: {done.stdout[-300:]} {done.stderr[-400:]}")


def exit_code():
    done = run("100mbit", "--ranks", "3", "--mpirun", "--", "sh", "-c", '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && exit 5; exit 0')
    expect("under mpirun the exit code is the failing rank's (5)", done.returncode == 5,
           f"rc {done.returncode}: {done.stdout[-300:]} {done.stderr[-300:]}")


def killed_midway():
    before = namespaces()
    marker = "317.25"
    p = subprocess.Popen([DDPSIM, "network", "200mbit", "--ranks", "3", "--mpirun", "--", "sleep", marker],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline()
    def ranks():  # the ranks' own processes (not the launcher's command lines that name them)
        return [p for p in left_behind(f"sleep {marker}") if p == f"sleep {marker}"]
    deadline = time.monotonic() + 20
    while len(ranks()) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    started = len(ranks())
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    deadline = time.monotonic() + 10
    while (namespaces() - before or left_behind(f"sleep {marker}") or left_behind("orted")) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    left = namespaces() - before
    expect("SIGKILL midway under mpirun: 3 ranks ran; no namespace, daemon or rank left",
           "emulated cluster" in line and started == 3 and not left and not left_behind(f"sleep {marker}")
           and not left_behind("orted"), f"{line.strip()} started {started}, left {left} {left_behind('orted')}")


def main():
    os.makedirs(WORK, exist_ok=True)
    cluster_test.WORK = WORK
    if os.geteuid() != 0:
        print("SKIPPED: the emulated cluster needs root")
        return 77
    each_rank_its_host()
    bytes_cross_the_links()
    exit_code()
    killed_midway()
    failures = cluster_test.failures
    print("all passed" if not failures else f"FAILED: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
