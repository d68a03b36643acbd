// The CUDA pipeline's tensor-core options: by default bf16 attention and
// projections run on tensor cores (mma.sync in the PTX);
// flash-attention=false and tensor-core-matmul=false keep each on the
// generic kernels.
// RUN: tfm-opt %s --split-input-file --tfm-lower-to-nvvm-pipeline="chip=sm_90" | FileCheck %s --check-prefixes=ATT-TC,PROJ-TC
// RUN: tfm-opt %s --split-input-file --tfm-lower-to-nvvm-pipeline="chip=sm_90 flash-attention=false" | FileCheck %s --check-prefixes=ATT-GENERIC,PROJ-TC
// RUN: tfm-opt %s --split-input-file --tfm-lower-to-nvvm-pipeline="chip=sm_90 tensor-core-matmul=false" | FileCheck %s --check-prefixes=ATT-TC,PROJ-GENERIC
// RUN: tfm-opt %s --split-input-file --tfm-lower-to-nvvm-pipeline="chip=sm_90 flash-attention=false tensor-core-matmul=false" | FileCheck %s --check-prefixes=ATT-GENERIC,PROJ-GENERIC

// ATT-TC-LABEL: llvm.func @attention(
// ATT-TC: gpu.binary @{{[a-z_]+}} {{.*}}mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ATT-GENERIC-LABEL: llvm.func @attention(
// ATT-GENERIC-NOT: mma.sync
// ATT-GENERIC: gpu.binary @{{[a-z_]+}}
// ATT-GENERIC-NOT: mma.sync
func.func @attention(%q: tensor<1x4x100x64xbf16>, %k: tensor<1x4x100x64xbf16>,
    %v: tensor<1x4x100x64xbf16>) -> tensor<1x4x100x64xbf16> {
  %o = tfm.attention %q, %k, %v {mask = #tfm.mask<causal>}
      : (tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>)
      -> tensor<1x4x100x64xbf16>
  return %o : tensor<1x4x100x64xbf16>
}

// -----

// PROJ-TC-LABEL: llvm.func @projection(
// PROJ-TC: gpu.binary @{{[a-z_]+}} {{.*}}mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PROJ-GENERIC-LABEL: llvm.func @projection(
// PROJ-GENERIC-NOT: mma.sync
// PROJ-GENERIC: gpu.binary @{{[a-z_]+}}
// PROJ-GENERIC-NOT: mma.sync
func.func @projection(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<?x96xbf16> {
  %y = tfm.linear %x, %w : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16>
  return %y : tensor<?x96xbf16>
}
