"""Making an emulated cluster (fabric.Layout) out of namespaces, bridges, veths and tc.

Namespaces are anonymous: each is held by one `sleep` process started under
`unshare --net`, and is gone when that process is. The whole run lives in a
PID namespace of its own (enter_pid_namespace), whose first process is the
launcher: when the launcher ends, however it ends (a SIGKILL included), the
kernel kills every process in it, the holders with them, and the namespaces,
their veths and bridges go too. Nothing is named in /var/run/netns, so
nothing can be left behind.
"""
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

from .fabric import MTU, FabricError, burst_bytes, line_kbit

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
INSIDE = "DDPSIM_FABRIC_PID_NS"  # set inside the run's PID namespace


def enter_pid_namespace(argv):
    """Run this command again as the first process of a new PID (and mount, for /proc) namespace and
    return only there; here, wait for it and exit with its code. The chain: this process, `unshare
    --kill-child` (SIGKILL for it when this process dies, by PR_SET_PDEATHSIG), the namespace's first
    process (SIGKILL for it when unshare dies): killing this process, even by SIGKILL, kills the namespace
    and everything in it. SIGTERM and SIGINT here do the same (unshare itself ignores them)."""
    if os.environ.get(INSIDE) == str(os.getpid()):
        return
    for tool in ("unshare", "nsenter", "ip", "tc"):
        if shutil.which(tool) is None:
            raise FabricError(f"the emulated cluster needs {tool} (util-linux and iproute2: scripts/setup.sh)")
    if os.geteuid() != 0:
        raise FabricError("the emulated cluster needs root (network namespaces, veths, bridges and tc)")
    env = dict(os.environ, **{INSIDE: "1"})  # the first process of the new namespace is PID 1
    libc = ctypes.CDLL(None, use_errno=True)
    child = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", sys.executable, "-m",
                              "ddpsim_torch", *argv], env=env,
                             preexec_fn=lambda: libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL))

    stopped = []

    def stop(signum, _frame):  # no wait() here: the main flow's wait holds Popen's lock
        stopped.append(signum)
        child.kill()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = child.wait()
    sys.exit(128 + stopped[0] if stopped else code)


class Namespaces:
    """The fabric's namespace and one a host, each held by a sleeping process."""

    def __init__(self):
        self.holders = {}

    def make(self, name):
        own = os.readlink("/proc/self/ns/net")
        p = subprocess.Popen(["unshare", "--net", "--", "sleep", "infinity"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if p.poll() is not None:
                raise FabricError(f"cannot make a network namespace: {p.stderr.read().decode().strip()}")
            try:
                if os.readlink(f"/proc/{p.pid}/ns/net") != own:
                    self.holders[name] = p
                    return
            except FileNotFoundError:
                pass
            time.sleep(0.005)
        raise FabricError("a network namespace took more than 10 s to make")

    def path(self, name):
        return f"/proc/{self.holders[name].pid}/ns/net"

    def pid(self, name):
        return self.holders[name].pid

    def prefix(self, name):
        return ["nsenter", f"--net={self.path(name)}", "--"]

    def run(self, name, argv, stdin=None):
        done = subprocess.run(self.prefix(name) + argv, input=stdin, capture_output=True, text=True)
        if done.returncode != 0:
            cmd = " ".join(argv) + (f" (batch: {stdin.strip().splitlines()[0]} ...)" if stdin else "")
            raise FabricError(f"in {name}: '{cmd}' failed: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def close(self):
        for p in self.holders.values():
            p.kill()
        for p in self.holders.values():
            p.wait()
        self.holders = {}


def _tbf(dev, rate_bps):
    """tc's batch line shaping a device's egress at rate_bps (a token bucket of about 1 ms)."""
    return (f"qdisc replace dev {dev} root tbf rate {line_kbit(rate_bps)} burst {burst_bytes(rate_bps)} "
            "latency 100ms")


def build(layout, ns):
    """Make the layout's namespaces, switches, links and shaping."""
    ns.make("fabric")
    for h in layout.hosts:
        ns.make(f"host{h['rank']}")
    fabric_ip, fabric_tc = ["link set lo up"], []
    for s in layout.switches:
        fabric_ip += [f"link add {s} type bridge forward_delay 0 stp_state 0", f"link set {s} up"]
    for link in layout.links:
        if link.ns_a == "fabric":  # switch to switch
            sa, sb = layout.uplink_switches(link)
            fabric_ip += [f"link add {link.end_a} mtu {MTU} type veth peer name {link.end_b} mtu {MTU}",
                          f"link set {link.end_a} master {sa} up", f"link set {link.end_b} master {sb} up"]
            if link.rate_bps is not None:
                fabric_tc += [_tbf(link.end_a, link.rate_bps), _tbf(link.end_b, link.rate_bps)]
        else:  # a host's veth: eth0 in its namespace, its switch port in the fabric's
            host = layout.hosts[int(link.ns_a[4:])]
            fabric_ip += [f"link add {link.end_b} mtu {MTU} type veth peer name eth0 netns {ns.pid(link.ns_a)} "
                          f"mtu {MTU}", f"link set {link.end_b} master {host['switch']} up"]
            if link.rate_bps is not None:
                fabric_tc.append(_tbf(link.end_b, link.rate_bps))
    ns.run("fabric", ["ip", "-batch", "-"], "\n".join(fabric_ip) + "\n")
    if fabric_tc:
        ns.run("fabric", ["tc", "-batch", "-"], "\n".join(fabric_tc) + "\n")
    links = layout.links_by_name()
    for h in layout.hosts:
        _configure_host(ns, h, links[f"host{h['rank']}"])


def _configure_host(ns, host, link):
    name = f"host{host['rank']}"
    ns.run(name, ["sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1", "net.ipv4.conf.default.route_localnet=1",
                  "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
    # Loopback keeps 127.0.0.1 only, so the rest of 127/8 routes over eth0 to the other hosts.
    ns.run(name, ["ip", "-batch", "-"], "\n".join([
        "link set lo up", "address del 127.0.0.1/8 dev lo", "address add 127.0.0.1/32 dev lo",
        f"address add {host['address']}/16 dev eth0", "link set eth0 up"]) + "\n")
    ns.run(name, ["sysctl", "-qw", "net.ipv4.conf.eth0.route_localnet=1"])
    if link.rate_bps is not None:
        ns.run(name, ["tc", "-batch", "-"], _tbf("eth0", link.rate_bps) + "\n")


def set_rate(ns, link, rate_bps):
    """Change a link's rate in both directions, mid-run (a fault)."""
    if link.ns_a == "fabric":
        ns.run("fabric", ["tc", "-batch", "-"], f"{_tbf(link.end_a, rate_bps)}\n{_tbf(link.end_b, rate_bps)}\n")
    else:
        ns.run(link.ns_a, ["tc", "-batch", "-"], _tbf(link.end_a, rate_bps) + "\n")
        ns.run("fabric", ["tc", "-batch", "-"], _tbf(link.end_b, rate_bps) + "\n")


def set_up(ns, link, up):
    """Take a link down or bring it back (its switch port), mid-run (a fault)."""
    ns.run("fabric", ["ip", "link", "set", link.end_b, "up" if up else "down"])


def setns_net(path):
    """Move this thread into the network namespace at path (sockets it then makes are made there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise FabricError(f"setns({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
