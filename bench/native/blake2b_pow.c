/*
 * Native baseline for the XE proof-of-work benchmark (bench/pow.ts): a plain C BLAKE2b PoW loop.
 *
 * PoW value = BLAKE2b with digest length 8 (one 40-byte block: nonce u64 LE || 32-byte target),
 * the 8 digest bytes read big-endian. LANES consecutive nonces are hashed per iteration, with the
 * state stored lane-wise in arrays so that gcc -O3 -march=native vectorises every step (and uses
 * vector rotates where the CPU has them). Rounds are unrolled by macros over constant message
 * indices; the zero message words and the nonce-independent work are left for the compiler to
 * fold and hoist, as any straightforward implementation would.
 *
 *   blake2b_pow hash <target hex (64)> <nonce>       prints the PoW value (decimal)
 *   blake2b_pow bench <threads> <seconds>            prints "hashes=<n> seconds=<s> threads=<t>"
 *
 * Build: cc -O3 -march=native -pthread -o blake2b_pow blake2b_pow.c
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LANES
#define LANES 8
#endif

static const uint64_t IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

/* One G on all lanes; x and y are message word indices (compile-time constants). */
#define G(a, b, c, d, x, y)                                   \
  for (int l = 0; l < LANES; l++) {                           \
    v[a][l] = v[a][l] + v[b][l] + m[x][l];                    \
    v[d][l] = ROTR(v[d][l] ^ v[a][l], 32);                    \
    v[c][l] = v[c][l] + v[d][l];                              \
    v[b][l] = ROTR(v[b][l] ^ v[c][l], 24);                    \
    v[a][l] = v[a][l] + v[b][l] + m[y][l];                    \
    v[d][l] = ROTR(v[d][l] ^ v[a][l], 16);                    \
    v[c][l] = v[c][l] + v[d][l];                              \
    v[b][l] = ROTR(v[b][l] ^ v[c][l], 63);                    \
  }

#define ROUND(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15) \
  G(0, 4, 8, 12, s0, s1)                                                            \
  G(1, 5, 9, 13, s2, s3)                                                            \
  G(2, 6, 10, 14, s4, s5)                                                           \
  G(3, 7, 11, 15, s6, s7)                                                           \
  G(0, 5, 10, 15, s8, s9)                                                           \
  G(1, 6, 11, 12, s10, s11)                                                         \
  G(2, 7, 8, 13, s12, s13)                                                          \
  G(3, 4, 9, 14, s14, s15)

/* PoW values of nonces start .. start + LANES - 1 for the target words t[0..3]. */
static inline void pow_lanes(const uint64_t t[4], uint64_t start, uint64_t out[LANES]) {
  uint64_t m[16][LANES];
  uint64_t v[16][LANES];
  const uint64_t h0 = IV[0] ^ 0x01010008ULL; /* digest length 8, fanout 1, depth 1 */
  for (int l = 0; l < LANES; l++) {
    m[0][l] = start + (uint64_t)l;
    for (int i = 1; i < 5; i++) m[i][l] = t[i - 1];
    for (int i = 5; i < 16; i++) m[i][l] = 0;
    v[0][l] = h0;
    for (int i = 1; i < 8; i++) v[i][l] = IV[i];
    for (int i = 0; i < 8; i++) v[8 + i][l] = IV[i];
    v[12][l] ^= 40;         /* bytes hashed */
    v[14][l] = ~v[14][l];   /* final block */
  }
  ROUND(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
  ROUND(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)
  ROUND(11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4)
  ROUND(7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8)
  ROUND(9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13)
  ROUND(2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9)
  ROUND(12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11)
  ROUND(13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10)
  ROUND(6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5)
  ROUND(10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0)
  ROUND(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
  ROUND(14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3)
  for (int l = 0; l < LANES; l++) out[l] = __builtin_bswap64(h0 ^ v[0][l] ^ v[8][l]);
}

static int parse_target(const char *hex, uint64_t t[4]) {
  unsigned char b[32];
  if (strlen(hex) != 64) return -1;
  for (int i = 0; i < 32; i++) {
    unsigned int x;
    if (sscanf(hex + 2 * i, "%2x", &x) != 1) return -1;
    b[i] = (unsigned char)x;
  }
  for (int w = 0; w < 4; w++) {
    t[w] = 0;
    for (int i = 7; i >= 0; i--) t[w] = (t[w] << 8) | b[8 * w + i]; /* little-endian words */
  }
  return 0;
}

/* ---- multi-threaded throughput ---- */

static atomic_int stop_flag;

struct worker {
  pthread_t thread;
  uint64_t start;
  uint64_t hashes;
  uint64_t hits; /* results >= difficulty: keeps the work observable */
};

static void *run_worker(void *arg) {
  struct worker *w = arg;
  const uint64_t t[4] = {0x47fa6825d7d021e4ULL, 0x68d1a87261c449a1ULL, 0x89214f0cc02f4d37ULL, 0xda73c66b94bfbba6ULL};
  const uint64_t difficulty = 0xffffffff00000000ULL;
  uint64_t nonce = w->start, hits = 0, hashes = 0;
  uint64_t out[LANES];
  while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
    for (int it = 0; it < 4096; it++) {
      pow_lanes(t, nonce, out);
      for (int l = 0; l < LANES; l++) hits += out[l] >= difficulty;
      nonce += LANES;
    }
    hashes += 4096 * LANES;
  }
  w->hashes = hashes;
  w->hits = hits;
  return NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "hash") == 0) {
    uint64_t t[4], out[LANES];
    if (parse_target(argv[2], t) != 0) return 2;
    pow_lanes(t, strtoull(argv[3], NULL, 10), out);
    printf("%llu\n", (unsigned long long)out[0]);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "bench") == 0) {
    int threads = atoi(argv[2]);
    double seconds = atof(argv[3]);
    if (threads < 1 || threads > 1024 || !(seconds > 0)) return 2;
    struct worker *ws = calloc((size_t)threads, sizeof *ws);
    if (ws == NULL) return 1;
    double t0 = now_seconds();
    for (int i = 0; i < threads; i++) {
      ws[i].start = (uint64_t)i << 48;
      pthread_create(&ws[i].thread, NULL, run_worker, &ws[i]);
    }
    struct timespec nap = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&nap, NULL);
    atomic_store(&stop_flag, 1);
    uint64_t hashes = 0, hits = 0;
    for (int i = 0; i < threads; i++) {
      pthread_join(ws[i].thread, NULL);
      hashes += ws[i].hashes;
      hits += ws[i].hits;
    }
    double elapsed = now_seconds() - t0;
    printf("hashes=%llu seconds=%.6f threads=%d lanes=%d hits=%llu\n", (unsigned long long)hashes, elapsed, threads,
           LANES, (unsigned long long)hits);
    free(ws);
    return 0;
  }
  fprintf(stderr, "usage: %s hash <target hex> <nonce> | bench <threads> <seconds>\n", argv[0]);
  return 2;
}
