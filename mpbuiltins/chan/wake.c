/* SPDX-License-Identifier: MIT */
/*
** Naps and wake-ups. An idle rank must cost no CPU, on any node, yet start
** a task within a millisecond. Waking up every millisecond to probe costs
** a share of a core in context switches, so a rank that has nothing to do naps
** long, and whoever sends it a message wakes it:
** - each rank opens a UDP socket on 127.0.0.1 and naps in ppoll() on it; a
**   datagram from a rank of the job (or a signal) ends the nap;
** - ranks on the same host publish, in a word of host-shared memory (found
**   with no communicator of its own: the start-up exchange below tells who
**   shares a host), whether they nap: a message to a napping neighbour is
**   followed by a datagram to 127.0.0.1, one to a busy neighbour by nothing
**   (a wake-up costs a busy rank microseconds);
** - ranks on other hosts cannot see that word: every control message to
**   them is followed by a datagram to the addresses they published (those
**   on one of our subnets first). User messages are not: a user wait that a
**   rank on another host could satisfy naps at most NAP_SHORT.
** A lost datagram costs at most one nap; nothing depends on it arriving.
**
** What a job exposes (mpbuiltins/README.md, "Trust model and security"):
** when every rank runs on one host, the sockets are bound to 127.0.0.1
** only; when some run elsewhere, each rank also binds its own addresses
** (same port). A datagram counts only if it comes from a rank of the job
** (the address and port it published), others are drained and counted
** apart (mp.stats().wakeups_refused) and the nap goes on. The nap words
** live in a sealed memfd (no name anyone could create first, a size nobody
** can change): the host's lowest rank lends it to the others through
** /proc/<pid>/fd, which only its owner can open, and closes it once all
** have mapped it (mpb_wake_ready); each checks its owner, size and seals.
**
** The same exchange tells every rank where the others run (mpb_where, the
** machine model of mp.machine): the lowest rank of each one's host, and the
** CPU and NUMA node it ran on at start.
** When a host has more ranks than cores, a waiting rank naps at once
** (rather than spin and yield) so that the rank computing beside it has
** the core; the sender's wake-up brings it back.
*/
#define _GNU_SOURCE /* ppoll, sched_getaffinity, memfd_create */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chan/wake.h"

#define MAXADDR 4

/* What each rank publishes at start (one allgather over the base
** communicator); the key tells which ranks share a host (host_key). */
#define KEYLEN 128
typedef struct {
  int32_t port;                /* network order */
  int32_t naddr;
  uint32_t addr[MAXADDR];      /* IPv4, network order */
  int32_t pid;
  int32_t words;               /* fd of its nap words' memfd in its process, -1: none */
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
  int words;                   /* my memfd of nap words while others may open it, -1: none */
  int fd;                      /* UDP socket on 127.0.0.1, -1: none */
  int net[MAXADDR];            /* on my_addr[i], same port (jobs over hosts), -1: none */
  wake_addr *peer;             /* [size] */
  int nlocal, all_local, over;
  uint32_t my_addr[MAXADDR], my_mask[MAXADDR];
  int my_n;
  uint64_t woken, refused;     /* datagrams from the job's ranks / from elsewhere */
  uint64_t naps, naps_out;     /* naps taken / those that ran out their time */
};

int mpb_all_local(const mpb_state *st) { return !st->wake || st->wake->all_local; }
int mpb_local_pid(const mpb_state *st, int r) {
  const mpb_wakeup *w = st->wake;
  if (!w || r < 0 || r >= st->size || w->peer[r].host != w->peer[st->rank].host) return 0;
  return w->peer[r].pid;
}
int mpb_oversubscribed(const mpb_state *st) { return st->wake && st->wake->over; }

int mpb_pid_gone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  char path[40], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* "pid (comm) S ...": the comm may hold anything */
  return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'); /* a zombie: dead, not reaped yet */
}

void mpb_wake_counts(const mpb_state *st, uint64_t *woken, uint64_t *refused) {
  *woken = st->wake ? st->wake->woken : 0;
  *refused = st->wake ? st->wake->refused : 0;
}

void mpb_nap_counts(const mpb_state *st, uint64_t *naps, uint64_t *timed_out) {
  *naps = st->wake ? st->wake->naps : 0;
  *timed_out = st->wake ? st->wake->naps_out : 0;
}

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

static int udp_socket(uint32_t addr, int32_t port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = (in_port_t)port;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* The loopback socket, port chosen by the system (published). */
static int open_socket(mpb_wakeup *w, int32_t *port) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  w->fd = udp_socket(htonl(INADDR_LOOPBACK), 0);
  if (w->fd < 0) return -1;
  if (getsockname(w->fd, (struct sockaddr *)&a, &len) != 0) {
    close(w->fd);
    w->fd = -1;
    return -1;
  }
  *port = (int32_t)a.sin_port;
  return 0;
}

/* Ranks on other hosts reach this one at its own addresses, on the same
** port. One taken by another program there (rare: it would have to have
** bound that address and port) only costs their wake-ups a nap. */
static void open_net_sockets(mpb_wakeup *w, int32_t port) {
  for (int i = 0; i < w->my_n; i++) w->net[i] = udp_socket(w->my_addr[i], port);
}

/* Who shares a host, as far as waking goes: the boot id (two machines never
** share one), the network namespace (the loopback a wake-up goes through),
** the mount and PID namespaces (the /proc/<pid> the nap words are lent
** through) and the host name.
** NUL-padded to KEYLEN. */
static void host_key(char *key) {
  memset(key, 0, KEYLEN);
  size_t n = 0;
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    n = fread(key, 1, 36, f);
    fclose(f);
  }
  static const char *const ns[] = {"/proc/self/ns/net", "/proc/self/ns/mnt", "/proc/self/ns/pid"};
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

/* Nap words for a host of up to `size` ranks, before anyone knows who
** leads the host: a memfd of size * WORD bytes (pages are only allocated
** when touched), owner-only, sealed against resizing. Its fd, or -1. */
static int make_words(int size) {
  int fd = memfd_create("mplua-naps", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size * WORD) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Map the host's nap words: the leader's memfd (mine when I lead), opened
** through /proc/<pid>/fd/<n> and checked before use: a regular file of
** this user, for nobody else, of the size the leader made, sealed. */
static int map_words(mpb_state *st, mpb_wakeup *w, int leader, char *err, size_t errlen) {
  const wake_addr *l = &w->peer[leader];
  char path[64];
  struct stat sb;
  int fd = -1, seals = 0;
  const char *why = NULL;
  w->shm_len = (size_t)w->nlocal * WORD;
  if (l->words < 0) why = "the host's first rank could not make them (memfd_create)";
  else if (st->rank == leader) fd = w->words;
  else {
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", (long)l->pid, (long)l->words);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) why = strerror(errno);
  }
  if (!why && fstat(fd, &sb) != 0) why = strerror(errno);
  if (!why && (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 077) ||
               sb.st_size != (off_t)st->size * WORD ||
               (seals = fcntl(fd, F_GET_SEALS)) < 0 ||
               (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)))
    why = "not the object the host's first rank made (owner, mode, size or seals differ)";
  if (!why) {
    void *p = mmap(NULL, w->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) why = strerror(errno);
    else w->shm = p;
  }
  if (fd >= 0 && fd != w->words) close(fd);
  if (!why) return 0;
  snprintf(err, errlen, "cannot share memory with the ranks of this host (rank %d's nap words, "
           "/proc/%ld/fd/%ld: %s)", leader, (long)l->pid, (long)l->words, why);
  return -1;
}

/* Collective over st->base (one allgather). Out of memory here ends the job
** at once: a rank that returned would leave the others in the collective. */
int mpb_wake_init(mpb_state *st, char *err, size_t errlen) {
  mpb_wakeup *w = calloc(1, sizeof *w);
  if (!w) mpb_fatal(st, "out of memory starting the runtime");
  st->wake = w;
  w->fd = -1;
  w->words = -1;
  for (int i = 0; i < MAXADDR; i++) w->net[i] = -1;
  w->nap_self = &w->own;
  w->nap_of = calloc((size_t)st->size, sizeof *w->nap_of);
  w->peer = calloc((size_t)st->size, sizeof *w->peer);
  if (!w->nap_of || !w->peer) mpb_fatal(st, "out of memory starting the runtime");
  wake_addr me;
  memset(&me, 0, sizeof me);
  me.pid = (int32_t)getpid();
  me.words = w->words = st->size > 1 ? make_words(st->size) : -1;
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
  if (st->rank != leader || w->nlocal == 1) { /* mine are not lent: gone */
    if (w->words >= 0) close(w->words);
    w->words = -1;
  }
  if (w->nlocal > 1) {
    if (map_words(st, w, leader, err, errlen) != 0) return -1;
    for (int r = 0, i = 0; r < st->size; r++)
      if (w->peer[r].host == leader) w->nap_of[r] = (int *)(void *)(w->shm + (size_t)i++ * WORD);
    w->nap_self = w->nap_of[st->rank];
  }
  w->all_local = w->nlocal == st->size;
  if (!w->all_local && w->fd >= 0) open_net_sockets(w, me.port);
  w->over = w->nlocal > cores();
  const char *ov = getenv("MPLUA_OVERSUBSCRIBED"); /* a benchmark's switch */
  if (ov && *ov) w->over = atoi(ov) != 0;
  return 0;
}

void mpb_wake_ready(mpb_state *st) {
  mpb_wakeup *w = st->wake;
  if (!w || w->words < 0) return;
  close(w->words);
  w->words = -1;
}

void mpb_wake_close(mpb_state *st) {
  mpb_wakeup *w = st->wake;
  if (!w) return;
  mpb_wake_ready(st); /* a start that failed half-way */
  if (w->shm) munmap(w->shm, w->shm_len);
  if (w->fd >= 0) close(w->fd);
  for (int i = 0; i < MAXADDR; i++)
    if (w->net[i] >= 0) close(w->net[i]);
  free(w->nap_of);
  free(w->peer);
  free(w);
  st->wake = NULL;
}

/* ------------------------------------------------------------ waking */
static void poke(int fd, uint32_t addr, int32_t port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = (in_port_t)port;
  (void)sendto(fd, "", 1, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
}

/* My socket on the subnet of a, or -1. */
static int subnet_socket(const mpb_wakeup *w, uint32_t a) {
  for (int j = 0; j < w->my_n; j++)
    if (w->net[j] >= 0 && (a & w->my_mask[j]) == (w->my_addr[j] & w->my_mask[j])) return w->net[j];
  return -1;
}

void mpb_wake(mpb_state *st, int dst, int ctl) {
  mpb_wakeup *w = st->wake;
  if (!w || w->fd < 0 || dst == st->rank) return;
  const wake_addr *p = &w->peer[dst];
  if (!p->port) return;
  if (w->nap_of[dst]) { /* a neighbour: only if it naps */
    if (__atomic_load_n(w->nap_of[dst], __ATOMIC_SEQ_CST))
      poke(w->fd, htonl(INADDR_LOOPBACK), p->port);
    return;
  }
  if (!ctl) return;
  int any = 0, via = -1;
  for (int i = 0; i < p->naddr && i < MAXADDR; i++) {
    int fd = subnet_socket(w, p->addr[i]);
    if (fd >= 0) poke(fd, p->addr[i], p->port), any = 1;
  }
  for (int j = 0; j < w->my_n && via < 0; j++) via = w->net[j];
  for (int i = 0; !any && via >= 0 && i < p->naddr && i < MAXADDR; i++)
    poke(via, p->addr[i], p->port);
}

/* ------------------------------------------------------------- napping */
/* The datagram came from a rank of the job: a neighbour's loopback socket,
** or a published address and port of a rank elsewhere. */
static int from_peer(const mpb_state *st, const struct sockaddr_in *a) {
  const mpb_wakeup *w = st->wake;
  int loop = a->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
  for (int r = 0; r < st->size; r++) {
    const wake_addr *p = &w->peer[r];
    if (r == st->rank || p->port != (int32_t)a->sin_port) continue;
    if (loop && w->nap_of[r]) return 1;
    for (int i = 0; !loop && i < p->naddr && i < MAXADDR; i++)
      if (p->addr[i] == a->sin_addr.s_addr) return 1;
  }
  return 0;
}

/* Take every datagram waiting on fd (an empty one too); 1 if one was a
** rank's. */
static int drain(mpb_state *st, int fd) {
  mpb_wakeup *w = st->wake;
  int woken = 0;
  for (;;) {
    char c[64];
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    ssize_t n = recvfrom(fd, c, sizeof c, MSG_DONTWAIT, (struct sockaddr *)&a, &alen);
    if (n < 0) {
      if (errno == EINTR) continue;
      return woken; /* EAGAIN: empty; ECONNREFUSED: a poke of ours that bounced */
    }
    if (alen >= sizeof a && a.sin_family == AF_INET && from_peer(st, &a)) woken = 1, w->woken++;
    else w->refused++;
  }
}

static long remaining_ns(const struct timespec *end) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (end->tv_sec - now.tv_sec) * 1000000000L + (end->tv_nsec - now.tv_nsec);
}

int mpb_nap(mpb_state *st, long ns, mpb_ready ready, void *ud, int ctl) {
  mpb_wakeup *w = st->wake;
  if (w && w->nap_self) { /* say so, then look once more: a sender may have missed it */
    __atomic_store_n(w->nap_self, 1, __ATOMIC_SEQ_CST);
    if (ready(st, ud)) {
      __atomic_store_n(w->nap_self, 0, __ATOMIC_SEQ_CST);
      return 1;
    }
  }
  if (w) w->naps++;
  if (w && w->fd >= 0) {
    struct pollfd pf[1 + MAXADDR];
    nfds_t n = 0;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ns / 1000000000L;
    end.tv_nsec += ns % 1000000000L;
    if (end.tv_nsec >= 1000000000L) end.tv_sec++, end.tv_nsec -= 1000000000L;
    pf[n++] = (struct pollfd){w->fd, POLLIN, 0};
    for (int i = 0; i < MAXADDR; i++)
      if (w->net[i] >= 0) pf[n++] = (struct pollfd){w->net[i], POLLIN, 0};
    /* The poll timer's SIGALRM (hook.c, every few ms in a task) is for Lua
    ** code that never calls the runtime; a wait polls on its own. Held back
    ** during the nap (it is taken when the nap ends), it wakes no rank that
    ** waits for a message: at P ranks waiting on few cores, P wake-ups a
    ** tick. SIGINT and SIGUSR1 still end a nap. */
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    sigaddset(&mask, SIGALRM);
    /* a datagram from elsewhere is drained and the nap goes on */
    for (long left = ns; left > 0; left = remaining_ns(&end)) {
      struct timespec ts = {left / 1000000000L, left % 1000000000L};
      int woken = 0;
      int got = ppoll(pf, n, &ts, &mask);
      if (got == 0) w->naps_out++;
      if (got <= 0) break; /* the time is up, or a signal */
      for (nfds_t i = 0; i < n; i++)
        if (pf[i].revents) woken |= drain(st, pf[i].fd);
      if (woken) break;
    }
  } else {
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&ts, NULL);
    if (w) w->naps_out++;
  }
  (void)ctl;
  if (w && w->nap_self) __atomic_store_n(w->nap_self, 0, __ATOMIC_SEQ_CST);
  return 0;
}
