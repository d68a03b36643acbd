/* Runs a compiled model through the runtime's C API alone (tfm-c/Runtime.h),
   as an application embedding tfm would, then feeds it each kind of bad
   input and prints the status and message it gets back. */

#include "tfm-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 2
#define S 7

static void report(const char *what, tfm_status status) {
  printf("%s: status %d: %s\n", what, (int)status,
         status == TFM_OK ? "ok" : tfmLastError());
}

static int64_t elements(int rank, const int64_t *shape) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d)
    count *= shape[d];
  return count;
}

/* Binds input `index` of `call` (f32, static shape) to new pseudo-random
   values in *values; 0 (and the message printed) on failure. */
static int randomInput(TfmCall *call, int index, float **values,
                       unsigned *seed) {
  int rank = tfmCallTensorRank(call, 0, index);
  const int64_t *shape = tfmCallTensorShape(call, 0, index);
  int64_t count = elements(rank, shape);
  *values = malloc(count * sizeof(float));
  for (int64_t e = 0; e < count; ++e) {
    *seed = *seed * 1103515245u + 12345u;
    (*values)[e] = ((*seed >> 16) % 2001 - 1000) / 8000.0f;
  }
  tfm_status status = tfmCallSetInput(call, index, "f32", rank, shape, *values);
  if (status != TFM_OK)
    report(tfmCallTensorName(call, 0, index), status);
  return status == TFM_OK;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  printf("%s\n", tfmRuntimeVersion());
  TfmLibrary *library = NULL;
  report("missing library", tfmLibraryOpen("no/such/model.so", &library));
  tfm_status status = tfmLibraryOpen(argv[1], &library);
  report("open", status);
  if (status != TFM_OK)
    return 1;
  printf("device %s, %d entry point(s): %s\n", tfmLibraryDevice(library),
         tfmLibraryEntryCount(library), tfmLibraryEntryName(library, 0));

  /* Small pseudo-random weights. A library that packs its f32 weights once
     (tfm-compile's default) makes the packed forms with prepare_weights;
     forward takes those in place of the weights they are made from. */
  float *raw[32] = {0}, *packed[32] = {0}, *own[32] = {0}, *given[32] = {0};
  unsigned seed = 1;
  TfmCall *prepare = NULL;
  report("prepare_weights", tfmCallCreate(library, "prepare_weights", &prepare));
  if (tfmCallTensorCount(prepare, 0) > 32 || tfmCallTensorCount(prepare, 1) > 32)
    return 1;
  for (int i = 0; i < tfmCallTensorCount(prepare, 0); ++i)
    if (!randomInput(prepare, i, &raw[i], &seed))
      return 1;
  for (int j = 0; j < tfmCallTensorCount(prepare, 1); ++j) {
    int rank = tfmCallTensorRank(prepare, 1, j);
    const int64_t *shape = tfmCallTensorShape(prepare, 1, j);
    packed[j] = malloc(elements(rank, shape) * sizeof(float));
    if (tfmCallSetOutput(prepare, j, "f32", rank, shape, packed[j]) != TFM_OK)
      return 1;
  }
  report("pack weights", tfmCallInvoke(prepare, NULL));

  TfmCall *call = NULL;
  report("unknown entry", tfmCallCreate(library, "backward", &call));
  report("create", tfmCallCreate(library, NULL, &call));

  /* Token ids in range, positions 0..S-1. */
  int32_t ids[B * S], positions[B * S];
  for (int i = 0; i < B * S; ++i) {
    ids[i] = (i * 37) % 101;
    positions[i] = i % S;
  }
  int64_t tokens[2] = {B, S};
  report("ids", tfmCallSetInput(call, 0, "i32", 2, tokens, ids));
  report("positions", tfmCallSetInput(call, 1, "i32", 2, tokens, positions));
  int inputs = tfmCallTensorCount(call, 0), packedInputs = 0;
  if (inputs > 32)
    return 1;
  for (int i = 2; i < inputs; ++i) {
    /* A packed weight, a weight prepare_weights also reads (the tied
       embedding), or one of forward's own. */
    const char *name = tfmCallTensorName(call, 0, i);
    int made = tfmCallFindTensor(prepare, 1, name);
    int shared = tfmCallFindTensor(prepare, 0, name);
    given[i] = made >= 0 ? packed[made] : shared >= 0 ? raw[shared] : NULL;
    if (!given[i]) {
      if (!randomInput(call, i, &own[i], &seed))
        return 1;
      given[i] = own[i];
      continue;
    }
    packedInputs += made >= 0;
    status = tfmCallSetInput(call, i, "f32", tfmCallTensorRank(call, 0, i),
                             tfmCallTensorShape(call, 0, i), given[i]);
    if (status != TFM_OK) {
      report(name, status);
      return 1;
    }
  }
  printf("forward reads %d packed weights\n", packedInputs);

  int64_t logitsShape[3];
  report("unbound output", tfmCallInvoke(call, NULL));
  report("output shape", tfmCallOutputShape(call, 0, logitsShape));
  printf("%s: [%lld, %lld, %lld]\n", tfmCallTensorName(call, 1, 0),
         (long long)logitsShape[0], (long long)logitsShape[1],
         (long long)logitsShape[2]);
  float *logits = malloc(B * S * logitsShape[2] * sizeof(float));
  report("bind logits", tfmCallSetOutput(call, 0, "f32", 3, logitsShape, logits));
  report("invoke", tfmCallInvoke(call, NULL));
  int finite = 1;
  for (int64_t i = 0; i < B * S * logitsShape[2]; ++i)
    finite &= logits[i] == logits[i] && logits[i] - logits[i] == 0;
  printf("logits finite: %d\n", finite);

  /* Bad inputs: each refused before anything runs. */
  report("f16 ids", tfmCallSetInput(call, 0, "f16", 2, tokens, ids));
  report("wrong rank", tfmCallSetInput(call, 0, "i32", 1, tokens, ids));
  int64_t embeddingShape[2] = {100, 64};
  int embedding = tfmCallFindTensor(call, 0, "model.embed_tokens.weight");
  report("wrong size", tfmCallSetInput(call, embedding, "f32", 2, embeddingShape,
                                       given[embedding]));
  report("logits sized for other ids",
         tfmCallSetOutput(call, 0, "f32", 3, (int64_t[]){B, S + 1, logitsShape[2]}, logits));
  int64_t wide[B * S];
  for (int i = 0; i < B * S; ++i)
    wide[i] = i == 3 ? 4294967296LL : ids[i];
  report("int64 ids", tfmCallSetInput(call, 0, "i64", 2, tokens, wide));
  wide[3] = ids[3];
  report("int64 ids that fit", tfmCallSetInput(call, 0, "i64", 2, tokens, wide));
  report("invoke with int64 ids", tfmCallInvoke(call, NULL));
  ids[5] = 101;
  report("id out of range (bound)", tfmCallSetInput(call, 0, "i32", 2, tokens, ids));
  int32_t check = 0;
  report("id out of range", tfmCallInvoke(call, &check));
  printf("failed check: %d\n", (int)check);
  ids[5] = 0;
  report("logits over the weights",
         tfmCallSetOutput(call, 0, "f32", 3, logitsShape, given[embedding]));
  report("invoke with overlapping arrays", tfmCallInvoke(call, NULL));
  report("missing input", tfmCallSetInput(call, 99, "f32", 0, NULL, NULL));

  tfmCallDestroy(call);
  tfmCallDestroy(prepare);
  for (int i = 0; i < 32; ++i) {
    free(raw[i]);
    free(packed[i]);
    free(own[i]);
  }
  free(logits);
  tfmLibraryClose(library);
  return 0;
}
