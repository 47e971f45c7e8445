"""Open MPI's mpirun on an emulated cluster of hosts (docs/emulated-network.md, "MPI on the cluster of hosts").

mpirun runs in host 0's namespace and starts one Open MPI daemon (orted) a
host through an rsh agent this module writes: where ssh would log into host N,
the agent enters host N's network namespace and a UTS namespace named hostN,
so each daemon and the rank it forks see one host with one NIC (eth0) and its
own name, as on a cluster of machines. The daemons reach mpirun, and the ranks
each other, over the emulated links only: the out-of-band channel and the TCP
transport are pinned to eth0, shared memory is off (the ranks are on different
hosts). One slot a host: rank r runs on host r.
"""
import os
import shlex
import stat

from . import fabric_build

MCA = {
    "plm_rsh_no_tree_spawn": "1",   # every daemon started by mpirun itself, through the agent
    "btl": "tcp,self",             # no shared memory between hosts
    "btl_tcp_if_include": "eth0",  # (Open MPI's default excludes 127.0.0.0/8, the hosts' addresses)
    "oob_tcp_if_include": "eth0",
}


def write_agent(layout, ns, folder):
    """The rsh agent for this cluster, as an executable file in folder: `agent hostN COMMAND...` runs COMMAND
    (a shell line, as ssh would) in host N's namespaces, with DDPSIM_HOST_ADDR its address."""
    cases = "\n".join("  host{0}) ns={1} addr={2} ;;".format(h["rank"], shlex.quote(ns.path(f"host{h['rank']}")),
                                                                  h["address"]) for h in layout.hosts)
    text = f"""#!/bin/sh
# ddpsim's rsh agent for Open MPI on an emulated cluster (python/ddpsim_torch/fabric_mpi.py)
host=$1
shift
case "$host" in
{cases}
  *) echo "ddpsim rsh agent: no host $host on this cluster" >&2; exit 255 ;;
esac
export DDPSIM_HOST_ADDR=$addr
exec nsenter --net="$ns" -- unshare --uts -- /bin/sh -c "hostname $host && exec $*"
"""
    path = os.path.join(folder, "rsh_agent.sh")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)
    return path


def command(layout, ns, agent, argv):
    """mpirun starting argv on every host, itself in host 0's namespaces (named host0)."""
    hosts = ",".join(f"host{h['rank']}:1" for h in layout.hosts)
    mpirun = ["mpirun", "-np", str(layout.ranks), "--host", hosts, "--mca", "plm_rsh_agent", agent]
    for key, value in MCA.items():
        mpirun += ["--mca", key, value]
    return ns.prefix("host0") + ["unshare", "--uts", "--", "/bin/sh", "-c", 'hostname host0 && exec "$@"', "sh"] + \
        mpirun + list(argv)


def environment(base, layout, record_path):
    """mpirun's environment, which every daemon and rank inherits: no torchrun variables (they would be one
    rank's for all), the check's record, and Open MPI's consent to run as root where this is root."""
    env = dict(base)
    for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "MASTER_ADDR",
              "MASTER_PORT", "LD_PRELOAD", "DDPSIM_RANK_ADDRS", "DDPSIM_RANK_ADDR", "DDPSIM_NETWORK", fabric_build.INSIDE):
        env.pop(k, None)
    env["DDPSIM_NETWORK_CHECK"] = record_path
    env["DDPSIM_HOST_ADDR"] = layout.hosts[0]["address"]
    if os.geteuid() == 0:
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env
