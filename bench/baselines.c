// Baselines for bench/attention.py, each printing one `key=value` line:
//
//   baselines sgemm N REPS
//       median GFLOP/s of an N x N x N cblas_sgemm (the machine's matmul rate)
//   baselines fma ITERATIONS REPS
//       median GFLOP/s of independent f32 multiply-add chains in vector
//       registers on every thread (the machine's FMA peak)
//   baselines triad MIB REPS
//       median GB/s of the STREAM triad a[i] = b[i] + s*c[i] over three
//       MIB-MiB double arrays, counting 2 reads + 1 write per element
//   baselines attention DIR B HQ HKV SQ SKV D CAUSAL MIN_REPS MIN_TIME SLOW
//       naive attention on DIR/{q,k,v}.f32 (row-major [B,H,S,D] f32), output
//       written to DIR/naive.f32; timed like bench/attention.py's `measure`
//
// Threads: OPENBLAS_NUM_THREADS for cblas, OMP_NUM_THREADS for fma and the
// triad.
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, int n) {
  qsort(values, n, sizeof *values, by_value);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Buffers of 4 MiB and more (the triad's arrays, the attention inputs) lie
// in 2 MiB pages, as NumPy's arrays (tfm's inputs in bench/attention.py)
// do: NumPy asks for them with madvise.
static void *checked_malloc(size_t bytes) {
  size_t huge = (size_t)4 << 20, page = (size_t)2 << 20;
  size_t align = bytes >= huge ? page : 64;
  bytes = (bytes + align - 1) / align * align;
  void *p = aligned_alloc(align, bytes);
  if (!p) {
    fprintf(stderr, "baselines: cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  if (align == page && madvise(p, bytes, MADV_HUGEPAGE))
    perror("baselines: madvise(MADV_HUGEPAGE)");
  return p;
}

// A "VmRSS" or "VmHWM" (peak) line of /proc/self/status, in KiB. Unlike
// getrusage's ru_maxrss, VmHWM excludes the parent's RSS at fork.
static long status_kib(const char *field) {
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, strlen(field))) kib = atol(line + strlen(field) + 1);
  if (f) fclose(f);
  return kib;
}

static int sgemm_rate(int n, int reps) {
  size_t count = (size_t)n * n;
  float *a = checked_malloc(count * 4), *b = checked_malloc(count * 4),
        *c = checked_malloc(count * 4);
  for (size_t i = 0; i < count; ++i) {
    a[i] = (float)(i % 7) - 3.0f;
    b[i] = (float)(i % 5) - 2.0f;
    c[i] = 0.0f;
  }
  double *rates = checked_malloc(reps * sizeof *rates);
  for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
    double start = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
                b, n, 0.0f, c, n);
    if (r >= 0) rates[r] = 2.0 * n * n * (double)n / (now() - start) / 1e9;
  }
  printf("sgemm n=%d threads=%d core=%s reps=%d gflops=%.2f\n", n,
         openblas_get_num_threads(), openblas_get_corename(), reps,
         median(rates, reps));
  return 0;
}

static int triad(long mib, int reps) {
  size_t n = (size_t)mib * 1024 * 1024 / sizeof(double);
  double *a = checked_malloc(n * 8), *b = checked_malloc(n * 8),
         *c = checked_malloc(n * 8);
  // First touch by the threads that later stream each part.
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  double *rates = checked_malloc(reps * sizeof *rates);
  for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
    double start = now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    if (r >= 0) rates[r] = 3.0 * 8.0 * n / (now() - start) / 1e9;
  }
  printf("triad mib_per_array=%ld threads=%d reps=%d gbps=%.2f check=%g\n", mib,
         omp_get_max_threads(), reps, median(rates, reps), a[n / 2]);
  return 0;
}

struct shape {
  int batch, q_heads, kv_heads, q_len, kv_len, dim, causal;
};

// Rows of softmax over `scores` [q_len, kv_len] in place; with `causal`, key
// j is visible to query i iff j <= i + (kv_len - q_len) (bottom-right aligned)
// and masked probabilities are 0 (a fully masked row is all 0).
// Serial: OpenMP threads here would spin against OpenBLAS's own threads.
static void softmax(float *scores, const struct shape *s) {
  for (int i = 0; i < s->q_len; ++i) {
    float *row = scores + (size_t)i * s->kv_len;
    long limit = s->causal ? (long)i + s->kv_len - s->q_len + 1 : s->kv_len;
    int visible = limit < 0 ? 0 : limit > s->kv_len ? s->kv_len : (int)limit;
    float max = -INFINITY, sum = 0.0f;
    for (int j = 0; j < visible; ++j) max = fmaxf(max, row[j]);
    for (int j = 0; j < visible; ++j) sum += row[j] = expf(row[j] - max);
    for (int j = 0; j < visible; ++j) row[j] /= sum;
    for (int j = visible; j < s->kv_len; ++j) row[j] = 0.0f;
  }
}

// out = softmax(QKᵀ/sqrt(D), mask) V, one (batch, head) at a time through
// the reused `scores` buffer; query head h reads kv head h / (HQ / HKV).
static void attention(const float *q, const float *k, const float *v,
                      float *out, float *scores, const struct shape *s) {
  size_t q_head = (size_t)s->q_len * s->dim, kv_head = (size_t)s->kv_len * s->dim;
  int group = s->q_heads / s->kv_heads;
  float scale = 1.0f / sqrtf((float)s->dim);
  for (int b = 0; b < s->batch; ++b)
    for (int h = 0; h < s->q_heads; ++h) {
      size_t qo = ((size_t)b * s->q_heads + h) * q_head;
      size_t kvo = ((size_t)b * s->kv_heads + h / group) * kv_head;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->q_len, s->kv_len,
                  s->dim, scale, q + qo, s->dim, k + kvo, s->dim, 0.0f, scores,
                  s->kv_len);
      softmax(scores, s);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->q_len, s->dim,
                  s->kv_len, 1.0f, scores, s->kv_len, v + kvo, s->dim, 0.0f,
                  out + qo, s->dim);
    }
}

static float *load(const char *dir, const char *name, size_t count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  float *data = checked_malloc(count * 4);
  FILE *f = fopen(path, "rb");
  if (!f || fread(data, 4, count, f) != count) {
    fprintf(stderr, "baselines: cannot read %zu floats from %s\n", count, path);
    exit(1);
  }
  fclose(f);
  return data;
}

static int run_attention(char **argv) {
  const char *dir = argv[0];
  struct shape s = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
                    atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
  int min_reps = atoi(argv[8]);
  double min_time = atof(argv[9]), slow = atof(argv[10]);
  size_t q_count = (size_t)s.batch * s.q_heads * s.q_len * s.dim;
  size_t kv_count = (size_t)s.batch * s.kv_heads * s.kv_len * s.dim;
  float *q = load(dir, "q.f32", q_count), *k = load(dir, "k.f32", kv_count),
        *v = load(dir, "v.f32", kv_count), *out = checked_malloc(q_count * 4);
  memset(out, 0, q_count * 4);
  // Untouched until the first call, so `base` counts only inputs and outputs.
  float *scores = checked_malloc((size_t)s.q_len * s.kv_len * 4);
  long base = status_kib("VmRSS");

  double start = now();
  attention(q, k, v, out, scores, &s);
  double warm = now() - start;
  if (warm > slow) min_reps = 1, min_time = 0.0;
  int reps = 0, capacity = 16;
  double total = 0.0, *times = checked_malloc(capacity * sizeof *times);
  while (reps < min_reps || total < min_time) {
    start = now();
    attention(q, k, v, out, scores, &s);
    if (reps == capacity) times = realloc(times, (capacity *= 2) * sizeof *times);
    total += times[reps++] = now() - start;
  }
  long peak = status_kib("VmHWM");

  char path[4096];
  snprintf(path, sizeof path, "%s/naive.f32", dir);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(out, 4, q_count, f) != q_count || fclose(f)) {
    fprintf(stderr, "baselines: cannot write %s\n", path);
    return 1;
  }
  printf("attention seconds=%.9f reps=%d warm_seconds=%.6f rss_base_kib=%ld "
         "rss_peak_kib=%ld\n",
         median(times, reps), reps, warm, base, peak);
  return 0;
}

// The FMA peak: on every OpenMP thread, 12 independent chains of f32
// multiply-adds on 64-byte vectors (one zmm register each with AVX-512, two
// ymm with AVX2), enough to hide the FMA latency on both ports.
typedef float vec16 __attribute__((vector_size(64)));
enum { kChains = 12 };

static int fma_peak(long iterations, int reps) {
  double *rates = checked_malloc(reps * sizeof *rates);
  float sink = 0;
  int threads = omp_get_max_threads();
  for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
    double start = now();
#pragma omp parallel reduction(+ : sink)
    {
      vec16 acc[kChains];
      vec16 scale = {0}, add = {0};
      scale += 0.999999f;
      // The chains settle at add / (1 - scale) = 1000: no denormals.
      add += 1e-3f;
      for (int j = 0; j < kChains; ++j) acc[j] = add + (float)j;
      for (long i = 0; i < iterations; ++i)
        for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * scale + add;
      for (int j = 0; j < kChains; ++j)
        for (int l = 0; l < 16; ++l) sink += acc[j][l];
    }
    if (r >= 0)
      rates[r] = 2.0 * 16 * kChains * (double)iterations * threads /
                 (now() - start) / 1e9;
  }
  printf("fma threads=%d reps=%d gflops=%.2f sink=%g\n", threads, reps,
         median(rates, reps), sink);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "sgemm"))
    return sgemm_rate(atoi(argv[2]), atoi(argv[3]));
  if (argc == 4 && !strcmp(argv[1], "fma"))
    return fma_peak(atol(argv[2]), atoi(argv[3]));
  if (argc == 4 && !strcmp(argv[1], "triad"))
    return triad(atol(argv[2]), atoi(argv[3]));
  if (argc == 13 && !strcmp(argv[1], "attention")) return run_attention(argv + 2);
  fprintf(stderr,
          "usage: baselines sgemm N REPS | fma ITERATIONS REPS | triad MIB REPS |\n"
          "       attention DIR B HQ HKV SQ SKV D CAUSAL MIN_REPS MIN_TIME SLOW\n");
  return 2;
}
