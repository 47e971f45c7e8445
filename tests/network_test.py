"""network.emulated: the emulated cluster network (docs/emulated-network.md).

- RATE and R:FRACTION are parsed, and bad ones refused with exit 2 and what was expected;
- where no namespace can be made (not root), exit 2 and the reason;
- inside one: each rank's link is checked and recorded; the shim makes a rank's unbound connect
  leave from its own address (RANK picks it from DDPSIM_RANK_ADDRS, as under torchrun) and its
  bind to 127.0.0.1 take its address; a process with no rank is left alone;
- the slow rank's link is capped at its fraction;
- port mode (Open MPI): a rank stays on 127.0.0.1 and connects from its block of ports;
- a user's DDP script (python/examples/torchrun_ddp.py) runs under `network` unchanged, its gloo
  traffic between the ranks' own addresses.
Exits 77 (ctest: skipped) where a namespace cannot be made.

Usage: network_test.py WORK_DIR
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
failures = []


def tool(*args, env=None, prefix=()):
    return subprocess.run(list(prefix) + [sys.executable, "-m", "ddpsim_torch"] + list(args), capture_output=True,
                          text=True, env=env or ENV)


def expect(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)


# Run inside the network: prints the source address of a connect and of a listener, as JSON.
PROBE = r"""
import json, socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
client = socket.socket(); client.connect(server.getsockname())
conn, peer = server.accept()
print(json.dumps({"connect_from": client.getsockname()[0], "listen_on": server.getsockname()[0],
                  "port": client.getsockname()[1]}))
"""


def probe(extra_env, work):
    check = os.path.join(work, "check.json")
    env = dict(ENV, **extra_env)
    done = tool("network", "1gbit", "--ranks", "2", "--slow-rank", "1:0.25", "--check-out", check, "--",
                sys.executable, "-c", PROBE, env=env)
    if done.returncode != 0:
        return None, done
    return json.loads(done.stdout.strip().splitlines()[-1]), done


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    for args, says in [(["1gbps"], "expected a rate such as 1gbit"), (["0mbit"], "expected a rate such as 1gbit"),
                       (["100gbit"], "from 1mbit to 40gbit"),
                       (["1gbit", "--slow-rank", "1:1.5"], "0 < FRACTION <= 1"),
                       (["1gbit", "--slow-rank", "2:0.5"], "expected a rank below the 2 ranks")]:
        done = tool("network", *args[:1], "--ranks", "2", *args[1:], "--", "true")
        expect(f"network {' '.join(args)}: exit 2 saying '{says}'", done.returncode == 2 and says in done.stderr,
               f"exit {done.returncode}: {done.stderr.strip()}")
    nobody = tool("network", "1gbit", "--ranks", "2", "--", "true",
                  prefix=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
    expect("as an unprivileged user: exit 2 and the reason",
           nobody.returncode == 2 and "cannot make a private network namespace" in nobody.stderr,
           f"exit {nobody.returncode}: {nobody.stderr.strip()}")
    if tool("network", "100mbit", "--ranks", "1", "--", "true").returncode != 0:
        print("SKIPPED: no network namespace can be made here")
        return 77
    got, done = probe({"RANK": "1"}, work)
    expect("a rank's connect and listener use its own address",
           got and (got["connect_from"], got["listen_on"]) == ("127.0.0.3", "127.0.0.3"), f"{got} {done}")
    record = json.load(open(os.path.join(work, "check.json"), encoding="utf-8"))
    caps = [(link["address"], link["cap_bps"]) for link in record["links"]]
    expect("the check records each link's cap", caps == [("127.0.0.2", 1e9), ("127.0.0.3", 2.5e8)], str(caps))
    expect("each link measured within 3 % of its cap",
           all(abs(link["measured_bps"] / link["cap_bps"] - 1) <= 0.03 for link in record["links"]), str(record))
    expect("the run says what it measured", "measured (Mbit/s): rank 0" in done.stdout, done.stdout)
    got, done = probe({"RANK": ""}, work)
    expect("a process with no rank is left alone",
           got and (got["connect_from"], got["listen_on"]) == ("127.0.0.1", "127.0.0.1"), f"{got} {done}")
    # Port mode (ddpsim-real under Open MPI): rank 1 stays on 127.0.0.1 and connects from the upper half of
    # its block of ports, 16448 .. 16511.
    got, done = probe({"RANK": "", "OMPI_COMM_WORLD_RANK": "1", "DDPSIM_NETBIND_MODE": "port"}, work)
    expect("port mode: rank 1 connects from 127.0.0.1, a port of 16480..16511",
           got and got["connect_from"] == "127.0.0.1" and 16480 <= got["port"] < 16512 and
           got["listen_on"] == "127.0.0.1", f"{got} {done}")
    # Any command: a user's DDP script, each rank started as torchrun starts it (RANK, WORLD_SIZE, MASTER_*;
    # Debian's torchrun itself fails on Python 3.11 before it starts a rank).
    example = os.path.join(ROOT, "python", "examples", "torchrun_ddp.py")
    ranks = (f"for r in 0 1; do RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 "
             f"{sys.executable} {example} & done; wait")
    done = tool("network", "1gbit", "--ranks", "2", "--", "sh", "-c", ranks)
    expect("a user's DDP script: gloo between the ranks' own addresses",
           "gloo to 127.0.0.2, 127.0.0.3" in done.stdout, done.stdout + done.stderr[-2000:])
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
