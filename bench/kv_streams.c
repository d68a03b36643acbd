// How fast can a decode step stream K and V, depending on the order it
// touches them? Reads a [8 heads, 32768 keys, 128] f32 K and V (256 MiB) with
// the threads splitting the heads, in 64-key tiles, four ways, and prints
// the median GB/s of each:
//   rows:        K and V tile rows front to back (a sequential stream): a
//                decode step's pattern since its P·V blocks cover whole V
//                rows (2x128; the second block of rows reads the tile
//                again, from cache);
//   tfm:         K as 16x16 blocks, 16 rows at a time, stored transposed
//                (the key tile packing, which decode steps no longer use),
//                V in 64-column row pieces (the former 4x64 P·V block);
//   k-blocks:    K as in tfm, V rows front to back;
//   v-pieces:    K rows front to back, V as in tfm: decode's pattern before
//                its P·V blocks covered whole V rows.
// With a prefetch distance d > 0, every tile first prefetches all lines of
// the K and V tile d tiles ahead. K and V lie in 2 MiB pages, as NumPy's
// arrays of 4 MiB and more do (it asks for them with madvise), unless the
// second argument is "small": then in 4 KiB pages.
//
//   bench/kv_streams.sh [prefetch distance] [small]
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { Heads = 8, Keys = 32768, Dim = 128, Tile = 64, Block = 16, Reps = 7 };
enum Pattern { Rows, Tfm, KBlocks, VPieces };
static const char *names[] = {"rows", "tfm", "k-blocks", "v-pieces"};

static __m512 readRows(const float *tile, __m512 acc) {
  for (int i = 0; i < Tile * Dim; i += 16)
    acc = _mm512_add_ps(acc, _mm512_loadu_ps(tile + i));
  return acc;
}

static void transposeBlocks(const float *tile, float *packed) {
  for (int r = 0; r < Tile; r += Block)
    for (int c = 0; c < Dim; c += Block) {
      __m512 rows[Block];
      for (int i = 0; i < Block; i++)
        rows[i] = _mm512_loadu_ps(tile + (r + i) * Dim + c);
      for (int i = 0; i < Block; i++) // stand-in for the transposition
        _mm512_storeu_ps(packed + (c + i) * Tile + r, rows[i]);
    }
}

static __m512 readRowPieces(const float *tile, __m512 acc) {
  for (int c0 = 0; c0 < Dim; c0 += 64)
    for (int r = 0; r < Tile; r++)
      for (int c = 0; c < 64; c += 16)
        acc = _mm512_add_ps(acc, _mm512_loadu_ps(tile + r * Dim + c0 + c));
  return acc;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int distance = argc > 1 ? atoi(argv[1]) : 0;
  int huge = !(argc > 2 && !strcmp(argv[2], "small"));
  size_t count = (size_t)Heads * Keys * Dim, bytes = count * sizeof(float);
  float *k = aligned_alloc(1 << 21, bytes), *v = aligned_alloc(1 << 21, bytes);
  if (!k || !v)
    return 1;
  if (huge && (madvise(k, bytes, MADV_HUGEPAGE) ||
               madvise(v, bytes, MADV_HUGEPAGE)))
    perror("madvise(MADV_HUGEPAGE)");
  for (size_t i = 0; i < count; i++) {
    k[i] = (float)(i % 7);
    v[i] = (float)(i % 5);
  }
  float sink = 0;
  printf("K+V %zu MiB in %s pages, %d threads, prefetch distance %d tiles\n",
         2 * bytes >> 20, huge ? "2 MiB" : "4 KiB", omp_get_max_threads(),
         distance);
  for (int pattern = Rows; pattern <= VPieces; pattern++) {
    double rates[Reps];
    for (int rep = 0; rep < Reps; rep++) {
      double start = omp_get_wtime();
#pragma omp parallel for schedule(static) reduction(+ : sink)
      for (int h = 0; h < Heads; h++) {
        static _Thread_local float packed[Dim * Tile];
        __m512 acc = _mm512_setzero_ps();
        const float *kh = k + (size_t)h * Keys * Dim;
        const float *vh = v + (size_t)h * Keys * Dim;
        for (int k0 = 0; k0 < Keys; k0 += Tile) {
          const float *kt = kh + (size_t)k0 * Dim, *vt = vh + (size_t)k0 * Dim;
          if (distance && k0 + distance * Tile < Keys)
            for (int i = 0; i < Tile * Dim; i += 16) {
              _mm_prefetch((const char *)(kt + distance * Tile * Dim + i), _MM_HINT_T0);
              _mm_prefetch((const char *)(vt + distance * Tile * Dim + i), _MM_HINT_T0);
            }
          if (pattern == Rows || pattern == VPieces) {
            acc = readRows(kt, acc);
          } else {
            transposeBlocks(kt, packed);
            acc = _mm512_add_ps(acc, _mm512_loadu_ps(packed + 80));
          }
          acc = pattern == Tfm || pattern == VPieces ? readRowPieces(vt, acc)
                                                     : readRows(vt, acc);
        }
        sink += _mm512_reduce_add_ps(acc);
      }
      rates[rep] = 2.0 * count * sizeof(float) / (omp_get_wtime() - start) / 1e9;
    }
    qsort(rates, Reps, sizeof(double), compare);
    printf("%-9s %5.1f GB/s (median of %d)\n", names[pattern], rates[Reps / 2],
           Reps);
  }
  return sink == 0.5f; // keep the reads
}
