/* SPDX-License-Identifier: MIT */
/*
** The kernel's wire (Jupyter messaging protocol 5.3): the connection file,
** the five ZeroMQ sockets bound to its address only, and messages as
** multipart frames, identities, "<IDS|MSG>", the HMAC-SHA256 signature,
** header, parent header, metadata, content, signed and checked with the
** file's key (an empty key: unsigned, as the protocol says). A message with
** a bad signature is dropped and logged on stderr, never handled.
** The heartbeat socket echoes in a thread of its own, so a busy kernel
** still answers it.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <zmq.h>

#define MPLUA_JUPYTER_KERNEL
#include "jupyter.h"

#define DELIM "<IDS|MSG>"
#define MAX_FRAMES 64

/* A process global: the kernel process's one set of sockets. */
static struct {
  char transport[16], ip[256];
  int port[JW_NSOCK];
  unsigned char *key;
  size_t keylen;
  char session[40];
  void *ctx, *sock[JW_NSOCK];
  EVP_MAC *mac;
} w;

static const char *const port_names[JW_NSOCK] = {"shell_port", "control_port", "stdin_port",
                                                 "iopub_port", "hb_port"};
static const char *const sock_names[JW_NSOCK] = {"shell", "control", "stdin", "iopub", "hb"};

void jw_random_hex(char *out, size_t n) {
  unsigned char r[64];
  size_t k = (n + 1) / 2 < sizeof r ? (n + 1) / 2 : sizeof r;
  if (getrandom(r, k, 0) != (ssize_t)k) { /* never in practice: still unique enough */
    for (size_t i = 0; i < k; i++)
      r[i] = (unsigned char)(rand() ^ (int)time(NULL));
  }
  for (size_t i = 0; i < n && i / 2 < k; i++)
    out[i] = "0123456789abcdef"[i % 2 ? r[i / 2] & 15 : r[i / 2] >> 4];
  out[n] = '\0';
}

/* A UUID-shaped id: 8-4-4-4-12 hex digits. */
static void new_id(char out[37]) {
  char h[33];
  jw_random_hex(h, 32);
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

int jw_config(const char *file, char *err, size_t errlen) {
  FILE *f = fopen(file, "rb");
  char *text = NULL;
  size_t len = 0, cap = 0;
  cJSON *c, *v;
  if (f == NULL) {
    snprintf(err, errlen, "cannot open the connection file %s: %s", file, strerror(errno));
    return -1;
  }
  for (;;) {
    if (len + 4096 > cap) {
      char *t = realloc(text, cap = cap ? 2 * cap : 8192);
      if (t == NULL) {
        free(text);
        fclose(f);
        snprintf(err, errlen, "not enough memory");
        return -1;
      }
      text = t;
    }
    size_t k = fread(text + len, 1, cap - len, f);
    len += k;
    if (k == 0)
      break;
  }
  fclose(f);
  c = cJSON_ParseWithLength(text, len);
  free(text);
  if (c == NULL) {
    snprintf(err, errlen, "the connection file %s is not JSON", file);
    return -1;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "transport");
  snprintf(w.transport, sizeof w.transport, "%s", cJSON_IsString(v) ? v->valuestring : "tcp");
  v = cJSON_GetObjectItemCaseSensitive(c, "ip");
  snprintf(w.ip, sizeof w.ip, "%s", cJSON_IsString(v) ? v->valuestring : "127.0.0.1");
  for (int s = 0; s < JW_NSOCK; s++) {
    v = cJSON_GetObjectItemCaseSensitive(c, port_names[s]);
    w.port[s] = cJSON_IsNumber(v) ? v->valueint : 0;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "signature_scheme");
  if (cJSON_IsString(v) && strcmp(v->valuestring, "hmac-sha256") != 0 && v->valuestring[0]) {
    snprintf(err, errlen, "signature scheme %s: only hmac-sha256 is known", v->valuestring);
    cJSON_Delete(c);
    return -1;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "key");
  if (cJSON_IsString(v) && v->valuestring[0] != '\0') {
    w.keylen = strlen(v->valuestring);
    w.key = (unsigned char *)strdup(v->valuestring);
  }
  cJSON_Delete(c);
  if (strcmp(w.transport, "tcp") != 0 && strcmp(w.transport, "ipc") != 0) {
    snprintf(err, errlen, "transport %s: tcp or ipc expected", w.transport);
    return -1;
  }
  new_id(w.session);
  if (w.key != NULL && (w.mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL) {
    snprintf(err, errlen, "OpenSSL has no HMAC");
    return -1;
  }
  return 0;
}

/* The heartbeat: whatever comes goes back. */
static void *heartbeat(void *ud) {
  (void)ud;
  zmq_proxy(w.sock[JW_HB], w.sock[JW_HB], NULL);
  return NULL;
}

int jw_bind(char *err, size_t errlen) {
  static const int types[JW_NSOCK] = {ZMQ_ROUTER, ZMQ_ROUTER, ZMQ_ROUTER, ZMQ_PUB, ZMQ_REP};
  int linger = 1000;
  pthread_t hb;
  sigset_t all, old;
  w.ctx = zmq_ctx_new();
  for (int s = 0; s < JW_NSOCK; s++) {
    char ep[300];
    if (strcmp(w.transport, "tcp") == 0)
      snprintf(ep, sizeof ep, "tcp://%s:%d", w.ip, w.port[s]);
    else
      snprintf(ep, sizeof ep, "ipc://%s-%d", w.ip, w.port[s]);
    w.sock[s] = zmq_socket(w.ctx, types[s]);
    if (w.sock[s] == NULL || zmq_setsockopt(w.sock[s], ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(w.sock[s], ep) != 0) {
      snprintf(err, errlen, "cannot bind the %s socket to %s: %s", sock_names[s], ep,
               zmq_strerror(zmq_errno()));
      return -1;
    }
  }
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay the main thread's */
  int rc = pthread_create(&hb, NULL, heartbeat, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start the heartbeat: %s", strerror(rc));
    return -1;
  }
  pthread_detach(hb);
  return 0;
}

int jw_fd(int s) {
  int fd = -1;
  size_t n = sizeof fd;
  zmq_getsockopt(w.sock[s], ZMQ_FD, &fd, &n);
  return fd;
}

/* The signature of the four parts, as 64 hex digits (out[65]). */
static void sign(const char *const part[4], const size_t len[4], char out[65]) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t mlen = 0;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  EVP_MAC_CTX *c = EVP_MAC_CTX_new(w.mac);
  out[0] = '\0';
  if (c == NULL || !EVP_MAC_init(c, w.key, w.keylen, params)) {
    EVP_MAC_CTX_free(c);
    return;
  }
  for (int i = 0; i < 4; i++)
    EVP_MAC_update(c, (const unsigned char *)part[i], len[i]);
  if (EVP_MAC_final(c, mac, &mlen, sizeof mac) && mlen == 32)
    for (size_t i = 0; i < mlen; i++)
      snprintf(out + 2 * i, 3, "%02x", mac[i]);
  EVP_MAC_CTX_free(c);
}

void jw_free(jmsg *m) {
  for (int i = 0; i < m->nids; i++)
    free(m->ids[i]);
  free(m->ids);
  free(m->idlen);
  cJSON_Delete(m->header);
  cJSON_Delete(m->parent);
  cJSON_Delete(m->metadata);
  cJSON_Delete(m->content);
  memset(m, 0, sizeof *m);
}

int jw_recv(int s, jmsg *m) {
  zmq_msg_t f[MAX_FRAMES];
  int nf = 0, more = 1, delim = -1, ok = 1;
  memset(m, 0, sizeof *m);
  while (more) {
    int events = 0;
    size_t elen = sizeof events, mlen = sizeof more;
    if (nf == 0) {
      if (zmq_getsockopt(w.sock[s], ZMQ_EVENTS, &events, &elen) != 0 || !(events & ZMQ_POLLIN))
        return 0;
    }
    if (nf == MAX_FRAMES) { /* too many frames: read the rest away */
      zmq_msg_t sink;
      zmq_msg_init(&sink);
      zmq_msg_recv(&sink, w.sock[s], 0);
      zmq_getsockopt(w.sock[s], ZMQ_RCVMORE, &more, &mlen);
      zmq_msg_close(&sink);
      ok = 0;
      continue;
    }
    zmq_msg_init(&f[nf]);
    if (zmq_msg_recv(&f[nf], w.sock[s], nf == 0 ? ZMQ_DONTWAIT : 0) < 0) {
      zmq_msg_close(&f[nf]);
      if (nf == 0)
        return 0;
      ok = 0;
      break;
    }
    if (delim < 0 && zmq_msg_size(&f[nf]) == strlen(DELIM) &&
        memcmp(zmq_msg_data(&f[nf]), DELIM, strlen(DELIM)) == 0)
      delim = nf;
    nf++;
    zmq_getsockopt(w.sock[s], ZMQ_RCVMORE, &more, &mlen);
  }
  if (ok && (delim < 0 || nf < delim + 6)) {
    fprintf(stderr, "mplua kernel: dropped a message on %s: not a Jupyter message\n",
            sock_names[s]);
    ok = 0;
  }
  if (ok) {
    const char *part[4];
    size_t len[4];
    char want[65] = "";
    size_t glen = zmq_msg_size(&f[delim + 1]);
    for (int i = 0; i < 4; i++) {
      part[i] = zmq_msg_data(&f[delim + 2 + i]);
      len[i] = zmq_msg_size(&f[delim + 2 + i]);
    }
    if (w.key != NULL) {
      sign(part, len, want);
      if (glen != 64 || CRYPTO_memcmp(want, zmq_msg_data(&f[delim + 1]), 64) != 0) {
        fprintf(stderr, "mplua kernel: dropped a message on %s: bad signature\n",
                sock_names[s]);
        ok = 0;
      }
    }
    if (ok) {
      m->header = cJSON_ParseWithLength(part[0], len[0]);
      m->parent = cJSON_ParseWithLength(part[1], len[1]);
      m->metadata = cJSON_ParseWithLength(part[2], len[2]);
      m->content = cJSON_ParseWithLength(part[3], len[3]);
      if (!cJSON_IsObject(m->header) || !cJSON_IsObject(m->content)) {
        fprintf(stderr, "mplua kernel: dropped a message on %s: bad JSON\n", sock_names[s]);
        ok = 0;
      }
    }
    if (ok && delim > 0) {
      m->ids = calloc((size_t)delim, sizeof *m->ids);
      m->idlen = calloc((size_t)delim, sizeof *m->idlen);
      for (int i = 0; m->ids != NULL && m->idlen != NULL && i < delim; i++) {
        m->idlen[i] = zmq_msg_size(&f[i]);
        if ((m->ids[i] = malloc(m->idlen[i] + 1)) == NULL)
          break;
        memcpy(m->ids[i], zmq_msg_data(&f[i]), m->idlen[i]);
        m->nids = i + 1;
      }
    }
  }
  for (int i = 0; i < nf; i++)
    zmq_msg_close(&f[i]);
  if (!ok) {
    jw_free(m);
    return jw_recv(s, m); /* the next one, if any */
  }
  return 1;
}

const char *jw_type(const jmsg *m) {
  cJSON *t = m && m->header ? cJSON_GetObjectItemCaseSensitive(m->header, "msg_type") : NULL;
  return cJSON_IsString(t) ? t->valuestring : "";
}

static cJSON *header(const char *msg_type) {
  char id[37], date[96];
  struct timespec ts;
  struct tm tm;
  const char *user = getenv("USER");
  cJSON *h = cJSON_CreateObject();
  new_id(id);
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  snprintf(date, sizeof date, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
  cJSON_AddStringToObject(h, "msg_id", id);
  cJSON_AddStringToObject(h, "session", w.session);
  cJSON_AddStringToObject(h, "username", user != NULL ? user : "mplua");
  cJSON_AddStringToObject(h, "date", date);
  cJSON_AddStringToObject(h, "msg_type", msg_type);
  cJSON_AddStringToObject(h, "version", "5.3");
  return h;
}

void jw_send_meta(int s, const jmsg *parent, const char *msg_type, cJSON *content,
                  cJSON *meta) {
  cJSON *h = header(msg_type);
  char *part[4], sig[65] = "";
  const char *cpart[4];
  size_t len[4];
  int nids = s != JW_IOPUB && parent != NULL ? parent->nids : 0;
  part[0] = cJSON_PrintUnformatted(h);
  part[1] = parent != NULL && parent->header != NULL ? cJSON_PrintUnformatted(parent->header)
                                                     : strdup("{}");
  part[2] = meta != NULL ? cJSON_PrintUnformatted(meta) : strdup("{}");
  part[3] = content != NULL ? cJSON_PrintUnformatted(content) : strdup("{}");
  for (int i = 0; i < 4; i++) {
    cpart[i] = part[i] != NULL ? part[i] : "{}";
    len[i] = strlen(cpart[i]);
  }
  if (w.key != NULL)
    sign(cpart, len, sig);
  if (s == JW_IOPUB)
    zmq_send(w.sock[s], msg_type, strlen(msg_type), ZMQ_SNDMORE);
  for (int i = 0; i < nids; i++)
    zmq_send(w.sock[s], parent->ids[i], parent->idlen[i], ZMQ_SNDMORE);
  zmq_send(w.sock[s], DELIM, strlen(DELIM), ZMQ_SNDMORE);
  zmq_send(w.sock[s], sig, strlen(sig), ZMQ_SNDMORE);
  for (int i = 0; i < 4; i++)
    zmq_send(w.sock[s], cpart[i], len[i], i < 3 ? ZMQ_SNDMORE : 0);
  for (int i = 0; i < 4; i++)
    free(part[i]);
  cJSON_Delete(h);
  cJSON_Delete(content);
  cJSON_Delete(meta);
}

void jw_send(int s, const jmsg *parent, const char *msg_type, cJSON *content) {
  jw_send_meta(s, parent, msg_type, content, NULL);
}
