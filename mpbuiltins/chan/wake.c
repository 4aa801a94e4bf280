/*
** Naps and wake-ups. An idle rank must cost no CPU, on any node, yet start
** a task within a millisecond. Waking up every millisecond to probe costs
** ~2% of a core (context switches), so a rank that has nothing to do naps
** long, and whoever sends it a message wakes it:
** - each rank opens a UDP socket and naps in ppoll() on it; a datagram (or
**   a signal) ends the nap;
** - ranks on the same host publish, in a word of node-shared memory, whether
**   they nap: a message to a napping neighbour is followed by a datagram to
**   127.0.0.1, one to a busy neighbour by nothing (a wake-up costs a busy
**   rank microseconds);
** - ranks on other hosts cannot see that word: every control message to
**   them is followed by a datagram to the addresses they published (those
**   on one of our subnets first). User messages are not: a user wait that a
**   rank on another host could satisfy naps at most NAP_SHORT.
** A lost datagram costs at most one nap; nothing depends on it arriving.
** The same exchange tells every rank where the others run (mpb_where, the
** machine model of mp.machine): the lowest rank of each one's host, and the
** CPU and NUMA node it ran on at start.
** When a host has more ranks than cores, a waiting rank naps at once
** (rather than spin and yield) so that the rank computing beside it has
** the core; the sender's wake-up brings it back.
*/
#define _GNU_SOURCE /* ppoll, sched_getaffinity */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "chan/chan.h"

#define MAXADDR 4

typedef struct {
  int32_t port;                /* network order */
  int32_t naddr;
  uint32_t addr[MAXADDR];      /* IPv4, network order */
  int32_t host;                /* the lowest rank on its host (mpb_where) */
  int32_t cpu, numa;           /* where it ran at start, -1: unknown */
  int32_t spare_;
} wake_addr;

struct mpb_wakeup {
  MPI_Comm node;               /* the ranks of this host */
  MPI_Win win;
  int *nap_self;               /* my "napping" word */
  int **nap_of;                /* [size]: a local rank's word, NULL elsewhere */
  int fd;                      /* UDP socket, -1: none */
  wake_addr *peer;             /* [size] */
  int nlocal, all_local, over;
  uint32_t my_addr[MAXADDR], my_mask[MAXADDR];
  int my_n;
};

int mpb_all_local(const mpb_state *st) { return !st->wake || st->wake->all_local; }
int mpb_oversubscribed(const mpb_state *st) { return st->wake && st->wake->over; }

/* The CPU this process runs on now and that CPU's NUMA node (the nodeK
** entry of /sys/devices/system/cpu/cpuN), -1 where unknown. */
static void where_now(int32_t *cpu, int32_t *numa) {
  int c = sched_getcpu();
  *cpu = c >= 0 ? c : -1;
  *numa = -1;
  if (c < 0) return;
  char path[64];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", c);
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  int k;
  while ((e = readdir(d)))
    if (sscanf(e->d_name, "node%d", &k) == 1 && k >= 0) {
      *numa = k;
      break;
    }
  closedir(d);
}

void mpb_where(const mpb_state *st, int r, int *host, int *cpu, int *numa) {
  const mpb_wakeup *w = st->wake;
  if (w && w->peer && r >= 0 && r < st->size && w->peer[r].host >= 0) {
    *host = w->peer[r].host;
    *cpu = w->peer[r].cpu;
    *numa = w->peer[r].numa;
    return;
  }
  int32_t c = -1, m = -1;
  if (r == st->rank) where_now(&c, &m);
  *host = w ? -1 : 0; /* no runtime exchange: one process, one host */
  *cpu = c, *numa = m;
}

/* The cores this process may run on. */
static int cores(void) {
  cpu_set_t set;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < n) n = CPU_COUNT(&set);
  return n > 0 ? (int)n : 1;
}

static void my_addresses(mpb_wakeup *w) {
  struct ifaddrs *ifa = NULL;
  w->my_n = 0;
  if (getifaddrs(&ifa) != 0) return;
  for (struct ifaddrs *i = ifa; i && w->my_n < MAXADDR; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask) continue;
    uint32_t a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
    if ((ntohl(a) >> 24) == 127) continue; /* loopback: neighbours use 127.0.0.1 */
    w->my_addr[w->my_n] = a;
    w->my_mask[w->my_n] = ((struct sockaddr_in *)(void *)i->ifa_netmask)->sin_addr.s_addr;
    w->my_n++;
  }
  freeifaddrs(ifa);
}

static int open_socket(mpb_wakeup *w, int32_t *port) {
  w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (w->fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  if (bind(w->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      getsockname(w->fd, (struct sockaddr *)&a, &len) != 0) {
    close(w->fd);
    w->fd = -1;
    return -1;
  }
  *port = (int32_t)a.sin_port;
  return 0;
}

/* Collective over st->base. Out of memory here ends the job at once: a rank
** that returned would leave the others in the collectives below. */
int mpb_wake_init(mpb_state *st, char *err, size_t errlen) {
  mpb_wakeup *w = calloc(1, sizeof *w);
  if (!w) mpb_fatal(st, "out of memory starting the runtime");
  st->wake = w;
  w->fd = -1;
  w->nap_of = calloc((size_t)st->size, sizeof *w->nap_of);
  w->peer = calloc((size_t)st->size, sizeof *w->peer);
  if (!w->nap_of || !w->peer) mpb_fatal(st, "out of memory starting the runtime");
  int rc = MPI_Comm_split_type(st->base, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &w->node);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(w->node, &w->nlocal);
  if (rc == MPI_SUCCESS)
    rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, w->node, &w->nap_self,
                                 &w->win);
  if (rc != MPI_SUCCESS) {
    w->nap_self = NULL;
    snprintf(err, errlen, "cannot share memory with the ranks of this host");
    return -1;
  }
  *w->nap_self = 0;
  int *ranks = malloc(sizeof *ranks * (size_t)w->nlocal);
  if (!ranks) mpb_fatal(st, "out of memory starting the runtime");
  wake_addr me;
  memset(&me, 0, sizeof me);
  me.host = -1;
  where_now(&me.cpu, &me.numa);
  if (open_socket(w, &me.port) == 0) { /* no socket: naps end by themselves */
    my_addresses(w);
    me.naddr = w->my_n;
    memcpy(me.addr, w->my_addr, sizeof me.addr);
  }
  rc = MPI_Allgather(&st->rank, 1, MPI_INT, ranks, 1, MPI_INT, w->node);
  if (rc == MPI_SUCCESS) {
    me.host = st->rank;
    for (int i = 0; i < w->nlocal; i++)
      if (ranks[i] >= 0 && ranks[i] < me.host) me.host = ranks[i];
  }
  if (rc == MPI_SUCCESS)
    rc = MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, w->peer, (int)sizeof me, MPI_BYTE, st->base);
  for (int i = 0; rc == MPI_SUCCESS && i < w->nlocal; i++) {
    MPI_Aint size;
    int disp;
    int *p = NULL;
    rc = MPI_Win_shared_query(w->win, i, &size, &disp, &p);
    if (rc == MPI_SUCCESS && ranks[i] >= 0 && ranks[i] < st->size) w->nap_of[ranks[i]] = p;
  }
  free(ranks);
  w->all_local = w->nlocal == st->size;
  w->over = w->nlocal > cores();
  const char *ov = getenv("MPLUA_OVERSUBSCRIBED"); /* a benchmark's switch */
  if (ov && *ov) w->over = atoi(ov) != 0;
  /* every flag is initialized before anyone reads it */
  if (rc == MPI_SUCCESS) rc = MPI_Barrier(w->node);
  if (rc != MPI_SUCCESS) {
    snprintf(err, errlen, "cannot exchange wake-up addresses with the other ranks");
    return -1;
  }
  return 0;
}

void mpb_wake_close(mpb_state *st) {
  mpb_wakeup *w = st->wake;
  if (!w) return;
  if (w->nap_self) {
    MPI_Win_free(&w->win);
    MPI_Comm_free(&w->node);
  }
  if (w->fd >= 0) close(w->fd);
  free(w->nap_of);
  free(w->peer);
  free(w);
  st->wake = NULL;
}

/* ------------------------------------------------------------ waking */
static void poke(mpb_wakeup *w, uint32_t addr, int32_t port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = (in_port_t)port;
  (void)sendto(w->fd, "", 1, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
}

static int same_subnet(const mpb_wakeup *w, uint32_t a) {
  for (int j = 0; j < w->my_n; j++)
    if ((a & w->my_mask[j]) == (w->my_addr[j] & w->my_mask[j])) return 1;
  return 0;
}

void mpb_wake(mpb_state *st, int dst, int ctl) {
  mpb_wakeup *w = st->wake;
  if (!w || w->fd < 0 || dst == st->rank) return;
  const wake_addr *p = &w->peer[dst];
  if (!p->port) return;
  if (w->nap_of[dst]) { /* a neighbour: only if it naps */
    if (__atomic_load_n(w->nap_of[dst], __ATOMIC_SEQ_CST))
      poke(w, htonl(INADDR_LOOPBACK), p->port);
    return;
  }
  if (!ctl) return;
  int any = 0;
  for (int i = 0; i < p->naddr && i < MAXADDR; i++)
    if (same_subnet(w, p->addr[i])) poke(w, p->addr[i], p->port), any = 1;
  for (int i = 0; !any && i < p->naddr && i < MAXADDR; i++) poke(w, p->addr[i], p->port);
}

/* ------------------------------------------------------------- napping */
int mpb_nap(mpb_state *st, long ns, mpb_ready ready, void *ud, int ctl) {
  mpb_wakeup *w = st->wake;
  if (w && w->nap_self) { /* say so, then look once more: a sender may have missed it */
    __atomic_store_n(w->nap_self, 1, __ATOMIC_SEQ_CST);
    if (mpb_poll_ctl(st, 1) || ready(st, ud)) {
      __atomic_store_n(w->nap_self, 0, __ATOMIC_SEQ_CST);
      return 1;
    }
  }
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  if (w && w->fd >= 0) {
    struct pollfd pf = {w->fd, POLLIN, 0};
    if (ppoll(&pf, 1, &ts, NULL) > 0) {
      char c[64];
      while (recv(w->fd, c, sizeof c, MSG_DONTWAIT) > 0) {
      }
    }
  } else {
    nanosleep(&ts, NULL);
  }
  (void)ctl;
  if (w && w->nap_self) __atomic_store_n(w->nap_self, 0, __ATOMIC_SEQ_CST);
  return 0;
}
