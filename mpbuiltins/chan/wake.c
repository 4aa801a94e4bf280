/*
** Naps and wake-ups. An idle rank must cost no CPU, on any node, yet start
** a task within a millisecond. Waking up every millisecond to probe costs
** ~2% of a core (context switches), so a rank that has nothing to do naps
** long, and whoever sends it a message wakes it:
** - each rank opens a UDP socket and naps in ppoll() on it; a datagram (or
**   a signal) ends the nap;
** - ranks on the same host publish, in a word of host-shared memory (a
**   POSIX shared memory object, found with no communicator of its own: the
**   start-up exchange below tells who shares a host), whether they nap: a message to a napping neighbour is followed by a datagram to
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "chan/chan.h"

#define MAXADDR 4

/* What each rank publishes at start (one allgather over the base
** communicator); the key tells which ranks share a host (host_key). */
#define KEYLEN 128
typedef struct {
  int32_t port;                /* network order */
  int32_t naddr;
  uint32_t addr[MAXADDR];      /* IPv4, network order */
  int32_t pid;
  int32_t cpu, numa;           /* where it ran at start, -1: unknown */
  int32_t host;                /* the lowest rank on its host (filled in by each receiver) */
  char key[KEYLEN];            /* host_key */
} wake_addr;

/* One nap word per rank of the host, a cache line each (no false sharing). */
#define WORD 64

struct mpb_wakeup {
  char *shm;                   /* the host's nap words, mapped (NULL: one rank here) */
  size_t shm_len;
  int own;                     /* my nap word when I am alone on my host */
  int *nap_self;               /* my "napping" word */
  int **nap_of;                /* [size]: a local rank's word, NULL elsewhere */
  char shm_name[64];           /* unlinked once every rank has mapped it ("": done) */
  int fd;                      /* UDP socket, -1: none */
  wake_addr *peer;             /* [size] */
  int nlocal, all_local, over;
  uint32_t my_addr[MAXADDR], my_mask[MAXADDR];
  int my_n;
};

int mpb_all_local(const mpb_state *st) { return !st->wake || st->wake->all_local; }
int mpb_local_pid(const mpb_state *st, int r) {
  const mpb_wakeup *w = st->wake;
  if (!w || r < 0 || r >= st->size || w->peer[r].host != w->peer[st->rank].host) return 0;
  return w->peer[r].pid;
}
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

/* Who shares a host, as far as waking goes: the boot id (two machines never
** share one), the network namespace (the loopback a wake-up goes through),
** the mount namespace (the /dev/shm of the nap words) and the host name.
** NUL-padded to KEYLEN. */
static void host_key(char *key) {
  memset(key, 0, KEYLEN);
  size_t n = 0;
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    n = fread(key, 1, 36, f);
    fclose(f);
  }
  static const char *const ns[] = {"/proc/self/ns/net", "/proc/self/ns/mnt"};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    char link[40];
    ssize_t k = readlink(ns[i], link, sizeof link - 1);
    if (k > 0 && n + (size_t)k + 1 < KEYLEN) {
      key[n++] = '/';
      memcpy(key + n, link, (size_t)k);
      n += (size_t)k;
    }
  }
  key[n++] = '@';
  if (gethostname(key + n, KEYLEN - 1 - n) != 0) key[n] = 0;
  key[KEYLEN - 1] = 0;
}

/* Map the host's nap words: a POSIX shared memory object named after the
** host's lowest rank (its pid and wake-up port, unique on the host while
** it lives). Every local rank creates or opens it (a new object is zero:
** nobody naps) and it is unlinked once all have mapped it (mpb_wake_ready). */
static int map_words(mpb_state *st, mpb_wakeup *w, int leader, char *err, size_t errlen) {
  const wake_addr *l = &w->peer[leader];
  snprintf(w->shm_name, sizeof w->shm_name, "/mplua-%ld-%ld", (long)l->pid,
           (long)(uint16_t)l->port);
  w->shm_len = (size_t)w->nlocal * WORD;
  int fd = shm_open(w->shm_name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0 && ftruncate(fd, (off_t)w->shm_len) == 0) {
    void *p = mmap(NULL, w->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) w->shm = p;
  }
  int e = errno;
  if (fd >= 0) close(fd);
  if (w->shm) return 0;
  if (st->rank == leader) shm_unlink(w->shm_name);
  w->shm_name[0] = 0;
  snprintf(err, errlen, "cannot share memory with the ranks of this host (%s: %s)",
           "shm_open", strerror(e));
  return -1;
}

/* Collective over st->base (one allgather). Out of memory here ends the job
** at once: a rank that returned would leave the others in the collective. */
int mpb_wake_init(mpb_state *st, char *err, size_t errlen) {
  mpb_wakeup *w = calloc(1, sizeof *w);
  if (!w) mpb_fatal(st, "out of memory starting the runtime");
  st->wake = w;
  w->fd = -1;
  w->nap_self = &w->own;
  w->nap_of = calloc((size_t)st->size, sizeof *w->nap_of);
  w->peer = calloc((size_t)st->size, sizeof *w->peer);
  if (!w->nap_of || !w->peer) mpb_fatal(st, "out of memory starting the runtime");
  wake_addr me;
  memset(&me, 0, sizeof me);
  me.pid = (int32_t)getpid();
  host_key(me.key);
  where_now(&me.cpu, &me.numa);
  if (open_socket(w, &me.port) == 0) { /* no socket: naps end by themselves */
    my_addresses(w);
    me.naddr = w->my_n;
    memcpy(me.addr, w->my_addr, sizeof me.addr);
  }
  if (MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, w->peer, (int)sizeof me, MPI_BYTE,
                    st->base) != MPI_SUCCESS) {
    snprintf(err, errlen, "cannot exchange wake-up addresses with the other ranks");
    return -1;
  }
  /* hosts in rank order: a rank's host is the first rank with its key (the
  ** keys are compared with the hosts found so far only) */
  int *hosts = malloc(sizeof *hosts * (size_t)st->size), nhosts = 0;
  if (!hosts) mpb_fatal(st, "out of memory starting the runtime");
  for (int r = 0; r < st->size; r++) {
    wake_addr *p = &w->peer[r];
    p->key[KEYLEN - 1] = 0;
    int h = 0;
    while (h < nhosts && memcmp(w->peer[hosts[h]].key, p->key, KEYLEN) != 0) h++;
    if (h == nhosts) hosts[nhosts++] = r;
    p->host = hosts[h];
  }
  free(hosts);
  int leader = w->peer[st->rank].host;
  for (int r = 0; r < st->size; r++) w->nlocal += w->peer[r].host == leader;
  if (w->nlocal > 1) {
    if (map_words(st, w, leader, err, errlen) != 0) return -1;
    for (int r = 0, i = 0; r < st->size; r++)
      if (w->peer[r].host == leader) w->nap_of[r] = (int *)(void *)(w->shm + (size_t)i++ * WORD);
    w->nap_self = w->nap_of[st->rank];
  }
  w->all_local = w->nlocal == st->size;
  w->over = w->nlocal > cores();
  const char *ov = getenv("MPLUA_OVERSUBSCRIBED"); /* a benchmark's switch */
  if (ov && *ov) w->over = atoi(ov) != 0;
  return 0;
}

void mpb_wake_ready(mpb_state *st) {
  mpb_wakeup *w = st->wake;
  if (!w || !w->shm_name[0]) return;
  if (w->peer[st->rank].host == st->rank) shm_unlink(w->shm_name);
  w->shm_name[0] = 0;
}

void mpb_wake_close(mpb_state *st) {
  mpb_wakeup *w = st->wake;
  if (!w) return;
  mpb_wake_ready(st); /* a start that failed half-way */
  if (w->shm) munmap(w->shm, w->shm_len);
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
