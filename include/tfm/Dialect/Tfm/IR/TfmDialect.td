//===- TfmDialect.td - tfm dialect definition --------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMDIALECT_TD
#define TFM_DIALECT_TFM_IR_TFMDIALECT_TD

include "mlir/IR/OpBase.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let cppNamespace = "::mlir::tfm";
  let summary = "Transformer building blocks: attention, masks, norms, FFN, RoPE";
  let description = [{
    The `tfm` dialect describes the layers modern decoder-only language
    models are built from, at the level a model author thinks in: attention
    with structured masks (MHA, GQA, MQA), RMSNorm and LayerNorm, gated and
    plain feed-forward networks, rotary embeddings, projections, and whole
    transformer blocks.

    Ops work on ranked tensors of `f32`, `f16` or `bf16`. Batch and sequence
    dimensions may be dynamic; head counts and feature widths are static.
    Accumulation precision is a lowering decision, not a type rule.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, traits>;

#endif // TFM_DIALECT_TFM_IR_TFMDIALECT_TD
