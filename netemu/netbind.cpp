/* libddpsim_netbind.so: an LD_PRELOAD shim that gives each rank of an
 * emulated network (python/ddpsim_torch/network.py, docs/emulated-network.md)
 * its own loopback address as the source of its traffic, so that the tc class
 * of that address caps it.
 *
 * A program that connects without binding first (gloo's pairs, a TCP store
 * client) leaves the kernel to pick the source address, and for any 127/8
 * destination the kernel picks 127.0.0.1: every rank's traffic would leave
 * from one address. A program that listens on 127.0.0.1 (gloo's default
 * device where the host name resolves to it) likewise. So, in a process that
 * knows its rank's address:
 * - connect() of an unbound IPv4 socket to a 127/8 address first binds it to
 *   the rank's address (port 0: the kernel picks the port);
 * - bind() to 127.0.0.1 binds to the rank's address instead (the port kept).
 * Nothing else is touched: binds to INADDR_ANY or to another address, IPv6,
 * and destinations outside 127/8 go through unchanged.
 *
 * Port mode (DDPSIM_NETBIND_MODE=port), for Open MPI, which drops a
 * connection whose source is not the address its peer advertised (every
 * rank's is 127.0.0.1 on the one loopback): a rank keeps 127.0.0.1 and is
 * known by its ports instead. Its listeners take the lower half of its block
 * (ddpsim-real sets btl_tcp_port_min_v4 and port_range_v4), and connect()
 * of an unbound IPv4 socket to 127/8 binds 127.0.0.1 and the first free
 * port of the upper half; the launcher's tc filters match the block.
 *
 * The rank's address: DDPSIM_RANK_ADDR, or else item RANK (torchrun),
 * OMPI_COMM_WORLD_RANK (Open MPI) or PMI_RANK of the comma-separated list
 * DDPSIM_RANK_ADDRS. Without either, the shim does nothing. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

using BindFn = int (*)(int, const sockaddr*, socklen_t);

template <typename Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

const char* rank_index() {
  const char* names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* v = getenv(names[i]);
    if (v && *v) return v;
  }
  return nullptr;
}

/* The rank's address into *out; 0 where this process has none. */
int rank_address(in_addr* out) {
  const char* one = getenv("DDPSIM_RANK_ADDR");
  if (one && *one) return inet_pton(AF_INET, one, out) == 1;
  const char* list = getenv("DDPSIM_RANK_ADDRS");
  const char* index = rank_index();
  if (!list || !index) return 0;
  char* end = nullptr;
  long r = strtol(index, &end, 10);
  if (*end != '\0' || r < 0) return 0;
  for (; r > 0 && list; --r) {
    list = strchr(list, ',');
    if (list) ++list;
  }
  if (!list) return 0;
  char text[INET_ADDRSTRLEN] = {0};
  size_t n = strcspn(list, ",");
  if (n == 0 || n >= sizeof text) return 0;
  memcpy(text, list, n);
  return inet_pton(AF_INET, text, out) == 1;
}

bool is_loopback(const sockaddr_in& a) { return (ntohl(a.sin_addr.s_addr) >> 24) == 127; }

/* Port mode (DDPSIM_NETBIND_MODE=port): the rank's block of ports, [first, first + size), from
 * DDPSIM_RANK_PORTS = "BASE:SIZE" and the rank index: first = BASE + SIZE * rank. */
bool port_mode() {
  const char* mode = getenv("DDPSIM_NETBIND_MODE");
  return mode && strcmp(mode, "port") == 0;
}

bool rank_ports(long* first, long* size) {
  const char* spec = getenv("DDPSIM_RANK_PORTS");
  const char* index = rank_index();
  if (!spec || !index) return false;
  char* end = nullptr;
  const long base = strtol(spec, &end, 10);
  if (*end != ':') return false;
  *size = strtol(end + 1, &end, 10);
  if (*end != '\0' || *size < 2) return false;
  const long r = strtol(index, &end, 10);
  if (*end != '\0' || r < 0) return false;
  *first = base + *size * r;
  return *first > 0 && *first + *size <= 65536;
}

/* Port mode's connect: bind to 127.0.0.1 and a port of the upper half of the rank's block (the lower half
 * is for its listeners), the first one free. */
void bind_rank_port(int fd) {
  long first = 0, size = 0;
  if (!rank_ports(&first, &size)) return;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (long port = first + size / 2; port < first + size; ++port) {
    from.sin_port = htons(static_cast<uint16_t>(port));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) == 0) return;
  }
}

}  // namespace

extern "C" {

int bind(int fd, const struct sockaddr* addr, socklen_t len) {
  static const BindFn real_bind = next_symbol<BindFn>("bind");
  in_addr mine;
  if (addr && addr->sa_family == AF_INET && len >= socklen_t{sizeof(sockaddr_in)}) {
    sockaddr_in a;
    memcpy(&a, addr, sizeof a);
    if (!port_mode() && a.sin_addr.s_addr == htonl(INADDR_LOOPBACK) && rank_address(&mine)) {
      a.sin_addr = mine;
      return real_bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    }
  }
  return real_bind(fd, addr, len);
}

int connect(int fd, const struct sockaddr* addr, socklen_t len) {
  static const BindFn real_connect = next_symbol<BindFn>("connect");
  if (addr && addr->sa_family == AF_INET && len >= socklen_t{sizeof(sockaddr_in)}) {
    sockaddr_in to, local;
    socklen_t local_len = sizeof local;
    memcpy(&to, addr, sizeof to);
    const bool unbound = is_loopback(to) && getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0 &&
                         local.sin_family == AF_INET && local.sin_addr.s_addr == htonl(INADDR_ANY) &&
                         local.sin_port == 0;
    in_addr mine;
    const int saved = errno;
    if (unbound && port_mode()) {
      bind_rank_port(fd);
    } else if (unbound && rank_address(&mine)) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      from.sin_addr = mine;
      bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from);  // on failure the kernel picks, as without us
    }
    errno = saved;
  }
  return real_connect(fd, addr, len);
}

}  // extern "C"
