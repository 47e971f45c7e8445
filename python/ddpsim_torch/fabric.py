"""An emulated cluster of hosts on this machine (docs/emulated-network.md, "A cluster of hosts").

Each rank is a host: a network namespace of its own with one veth, `eth0`,
whose other end is a port of a switch (a Linux bridge). Switches live in one
more namespace, the fabric's. Every address is in 127.0.0.0/8: host h of node
n is 127.1.n.(h + 1), with net.ipv4.conf.*.route_localnet=1 and the host's
loopback narrowed to 127.0.0.1/32, so 127.1.x.y is reached over eth0.

The layout follows a scenario's `cluster:` section (the C++ loader gives it
as JSON, so both uses read one file through one parser):
- one GPU a node: each host is a node; its veth is the node's NIC, shaped at
  `inter.bandwidth_GBps`, on the top switch (a star) or on its leaf (a fat
  tree);
- G GPUs a node: the node's hosts hang off a node bridge by veths shaped at
  `intra.bandwidth_GBps` (unshaped where faster than this machine carries);
  the node's bridge reaches the top (or its leaf) by one uplink, the node's
  NIC, at `inter.bandwidth_GBps`;
- a fat tree: leaves of `nodes_per_switch` nodes, each leaf joined to the
  spine by one uplink at nodes_per_switch x bandwidth / oversubscription.
Every link is a veth pair shaped on the egress of both ends (tc tbf): what a
host sends and what it receives, so two senders into one host share its rate.
"""
import json
import os

MAX_SHAPED_BPS = 2e9      # faster intra links stay unshaped: shaping past 2 Gbit/s is not checked here
BURST_S = 0.001           # a link's token bucket: 1 ms at its rate
MIN_BURST = 16 * 1514     # ... and at least 16 full frames
MTU = 1500
# A link's rate in a description is what it carries of payload: TCP's 1448 bytes (with timestamps) in each
# 1514-byte frame tbf counts (Ethernet's header included). tbf is set to the line rate that carries it.
LINE_PER_PAYLOAD = (MTU + 14) / (MTU - 52)


class FabricError(Exception):
    """The description cannot be emulated here (exit 2)."""


class Link:
    """A veth pair: end a in namespace ns_a, end b in ns_b; rate_bps per direction (None: unshaped)."""

    def __init__(self, name, ns_a, end_a, ns_b, end_b, rate_bps, what):
        self.name, self.ns_a, self.end_a, self.ns_b, self.end_b = name, ns_a, end_a, ns_b, end_b
        self.rate_bps, self.what = rate_bps, what

    def record(self):
        return {"link": self.name, "what": self.what,
                "rate_bps": None if self.rate_bps is None else round(self.rate_bps)}


def one_switch(rate_bps, ranks):
    """`--network RATE` as a cluster description: `ranks` hosts of one rank each, each behind its own RATE NIC
    on one switch (as `nodes: W, gpus_per_node: 1` with a star of RATE links)."""
    link = {"topology": "star", "bandwidth_GBps": rate_bps / 8e9, "latency_us": 0, "duplex": "full"}
    return {"nodes": ranks, "gpus_per_node": 1, "intra": dict(link), "inter": link}


class Layout:
    """Hosts, switches and links for W ranks of a cluster description (the JSON of `cluster:`)."""

    def __init__(self, cluster, ranks=None, slow=None, faults=()):
        self.cluster = cluster
        self.faults = list(faults)
        g, nodes = cluster["gpus_per_node"], cluster["nodes"]
        self.ranks = nodes * g if ranks is None else ranks
        self.gpus_per_node = g
        self.slow = dict(slow or {})
        self._refuse_what_cannot_be_emulated()
        self.hosts = [{"rank": r, "node": r // g, "local": r % g, "address": f"127.1.{r // g}.{r % g + 1}"}
                      for r in range(self.ranks)]
        self.switches, self.links = ["top"], []
        self._lay_out()
        for f in self.faults:
            link = self.links_by_name().get(f"host{f['rank']}")
            if f["rank"] >= self.ranks:
                raise FabricError(f"--fault {f['rank']}: expected a rank below the {self.ranks} ranks")
            if f["kind"] == "slow" and link.rate_bps is None:
                raise FabricError(f"--fault {f['at_s']:g}:slow:{f['rank']}: its link is unshaped (intra faster than "
                                  f"{MAX_SHAPED_BPS / 1e9:g} Gbit/s); a slowed link needs a shaped one")

    def _refuse_what_cannot_be_emulated(self):
        c, g = self.cluster, self.gpus_per_node
        if not 1 <= self.ranks <= c["nodes"] * g:
            raise FabricError(f"--ranks {self.ranks}: expected 1 to {c['nodes'] * g}, the cluster's nodes x "
                              "gpus_per_node")
        if g > 250 or self.ranks > 250:
            raise FabricError(f"{self.ranks} ranks of {g} a node: the emulation gives up to 250 hosts, "
                              "addresses 127.1.NODE.1 up")
        bad = [r for r in self.slow if r >= self.ranks]
        if bad:
            raise FabricError(f"--slow-rank {bad[0]}: expected a rank below the {self.ranks} ranks")
        if c["nodes"] > 1:
            inter = c["inter"]
            if c.get("nics_per_node", 1) != 1:
                raise FabricError(f"cluster.nics_per_node {c['nics_per_node']}: the emulation joins a node to the "
                                  "network by one uplink; describe one NIC a node (nics_per_node: 1)")
            if inter.get("duplex", "full") != "full":
                raise FabricError("cluster.inter.duplex half: the emulated links are full duplex (a veth's two "
                                  "directions are shaped apart)")
        if g > 1 and self.cluster["intra"].get("duplex", "full") != "full":
            raise FabricError("cluster.intra.duplex half: the emulated links are full duplex")

    def _inter(self):
        return self.cluster.get("inter") or self.cluster["intra"]

    def _nic_bps(self):
        return self._inter()["bandwidth_GBps"] * 8e9

    def _switch_of_node(self, node):
        """Where a node's NIC plugs in: the top switch, or its leaf in a fat tree."""
        inter = self._inter()
        if inter.get("topology") != "fat_tree":
            return "top"
        return f"leaf{node // inter['nodes_per_switch']}"

    def _lay_out(self):
        g = self.gpus_per_node
        used_nodes = sorted({h["node"] for h in self.hosts})
        inter = self._inter()
        if inter.get("topology") == "fat_tree":
            per = inter["nodes_per_switch"]
            for leaf in sorted({n // per for n in used_nodes}):
                self.switches.append(f"leaf{leaf}")
                rate = per * self._nic_bps() / inter.get("oversubscription", 1)
                self.links.append(Link(f"leaf{leaf}", "fabric", f"lu{leaf}", "fabric", f"su{leaf}", rate,
                                       f"leaf {leaf}'s uplink to the spine"))
        nodes_bridged = g > 1 and self.cluster["nodes"] > 1  # one node: its hosts on the top switch
        for n in used_nodes:
            if nodes_bridged:
                self.switches.append(f"n{n}")
                self.links.append(Link(f"nic{n}", "fabric", f"nu{n}", "fabric", f"tu{n}", self._nic_bps(),
                                       f"node {n}'s NIC (its uplink)"))
        intra_bps = self.cluster["intra"]["bandwidth_GBps"] * 8e9 if g > 1 else None
        for h in self.hosts:
            r = h["rank"]
            if g == 1:
                rate, what, switch = self._nic_bps(), f"rank {r}'s NIC", self._switch_of_node(h["node"])
            else:
                rate = intra_bps if intra_bps <= MAX_SHAPED_BPS else None
                what = f"rank {r}'s link in node {h['node']}"
                switch = f"n{h['node']}" if nodes_bridged else "top"
            if r in self.slow and rate is not None:
                rate *= self.slow[r]
                what += f" (slow: {self.slow[r]:g} of its rate)"
            elif r in self.slow:
                raise FabricError(f"--slow-rank {r}: its link inside the node is unshaped (intra faster than "
                                  f"{MAX_SHAPED_BPS / 1e9:g} Gbit/s); a slow rank needs a shaped link")
            h["switch"] = switch
            self.links.append(Link(f"host{r}", f"host{r}", "eth0", "fabric", f"h{r}", rate, what))

    def uplink_switches(self, link):
        """The bridges a switch-to-switch link's two ends plug into (end a, end b)."""
        if link.name.startswith("nic"):
            n = int(link.name[3:])
            return f"n{n}", self._switch_of_node(n)
        return link.name, "top"  # a leaf's uplink: the spine is the top switch

    def path(self, src, dst):
        """The links a transfer from rank src to rank dst crosses, each with the direction it takes
        ('a' if it leaves through end a)."""
        hs, hd = self.hosts[src], self.hosts[dst]
        out = [(self.links_by_name()[f"host{src}"], "a")]
        if self.gpus_per_node > 1 and hs["node"] != hd["node"]:
            out.append((self.links_by_name()[f"nic{hs['node']}"], "a"))
        ls, ld = self._switch_of_node(hs["node"]), self._switch_of_node(hd["node"])
        if ls != ld:
            out.append((self.links_by_name()[ls], "a"))
            out.append((self.links_by_name()[ld], "b"))
        if self.gpus_per_node > 1 and hs["node"] != hd["node"]:
            out.append((self.links_by_name()[f"nic{hd['node']}"], "b"))
        out.append((self.links_by_name()[f"host{dst}"], "b"))
        return out

    def links_by_name(self):
        return {link.name: link for link in self.links}

    def describe(self):
        c = self.cluster
        shape = f"{c['nodes']} node(s) x {self.gpus_per_node} host(s)"
        return {"ranks": self.ranks, "layout": shape, "hosts": self.hosts,
                "links": [link.record() for link in self.links],
                "not_emulated": "latency (no netem here: each hop adds a veth's own tens of microseconds), "
                                "half duplex, more than one NIC a node"}


def parse_fault(text):
    """'AT:slow:R:FRACTION' (rank R's link at FRACTION of its rate from AT s on: a trickle), 'AT:down:R' (its
    link down: the host cut off), 'AT:flap:R:PERIOD' (its link down and up every PERIOD s from AT s on)."""
    parts = text.strip().split(":")
    try:
        at, kind, rank = float(parts[0]), parts[1], int(parts[2])
        value = float(parts[3]) if len(parts) == 4 else None
    except (ValueError, IndexError):
        at, kind, rank, value = -1, "", -1, None
    shapes = {"slow": (4, lambda v: 0 < v <= 1), "down": (3, None), "flap": (4, lambda v: 0.05 <= v <= 3600)}
    ok = (kind in shapes and len(parts) == shapes[kind][0] and 0 <= at <= 86400 and rank >= 0
          and (shapes[kind][1] is None or shapes[kind][1](value)))
    if not ok:
        raise ValueError(f"'{text}': expected AT:slow:R:FRACTION (0 < FRACTION <= 1), AT:down:R or AT:flap:R:PERIOD "
                         "(0.05 to 3600 s), AT the seconds after the ranks start, such as 5:slow:1:0.01")
    return {"at_s": at, "kind": kind, "rank": rank, "value": value}


def burst_bytes(rate_bps):
    return max(MIN_BURST, int(rate_bps * LINE_PER_PAYLOAD / 8 * BURST_S))


def line_kbit(rate_bps):
    """tc's rate for a link carrying rate_bps of TCP payload."""
    return f"{rate_bps * LINE_PER_PAYLOAD / 1e3:.0f}kbit"


def cluster_from_environment():
    """DDPSIM_CLUSTER_JSON (set by the ddpsim binary from --cluster S.yaml), parsed, or None."""
    text = os.environ.get("DDPSIM_CLUSTER_JSON")
    return json.loads(text) if text else None
