//===- TfmAttrs.td - tfm enums and attributes --------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_IR_TFMATTRS_TD
#define TFM_DIALECT_TFM_IR_TFMATTRS_TD

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//
// Enums used by ops are plain integer-backed attributes, printed as bare
// keywords in op assembly (`tfm.ffn swiglu ...`).
//===----------------------------------------------------------------------===//

def Tfm_MaskKind : I32EnumAttr<"MaskKind", "structured attention mask kind", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"causal", 1>,
    I32EnumAttrCase<"sliding_window", 2>,
    I32EnumAttrCase<"band", 3>]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}

def Tfm_NormKind : I32EnumAttr<"NormKind", "normalization kind", [
    I32EnumAttrCase<"rms_norm", 0>,
    I32EnumAttrCase<"layer_norm", 1>]> {
  let cppNamespace = "::mlir::tfm";
}

def Tfm_NormPlacement : I32EnumAttr<"NormPlacement",
    "where a block normalizes: before each sublayer or after each residual", [
    I32EnumAttrCase<"pre", 0>,
    I32EnumAttrCase<"post", 1>]> {
  let cppNamespace = "::mlir::tfm";
}

def Tfm_FFNKind : I32EnumAttr<"FFNKind", "feed-forward network kind", [
    I32EnumAttrCase<"swiglu", 0>,
    I32EnumAttrCase<"geglu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"gelu_tanh", 3>,
    I32EnumAttrCase<"relu", 4>,
    I32EnumAttrCase<"silu", 5>]> {
  let cppNamespace = "::mlir::tfm";
}

def Tfm_RopeStyle : I32EnumAttr<"RopeStyle", "rotary embedding pairing", [
    I32EnumAttrCase<"half", 0>,
    I32EnumAttrCase<"interleaved", 1>]> {
  let cppNamespace = "::mlir::tfm";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tfm_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tfm_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tfm_MaskAttr : Tfm_Attr<"Mask", "mask"> {
  let summary = "structured attention mask";
  let description = [{
    A mask that is described by its structure instead of by data, so that
    tiling can skip whole blocks and no `Sq x Skv` tensor ever exists.

    Every kind is a band around the query's absolute position `p`: key `j`
    is visible iff `p - left <= j <= p + right`, where an absent bound is
    unbounded. With `Sq` queries and `Skv` keys, query `i` sits at
    `p = i + Skv - Sq` (bottom-right alignment, as with a KV cache).

    | spelling | band | meaning |
    | --- | --- | --- |
    | `#tfm.mask<none>` | (-inf, +inf) | every key is visible |
    | `#tfm.mask<causal>` | (-inf, 0] | keys up to the query's own position |
    | `#tfm.mask<sliding_window<W>>` | [p-W+1, p] | the last `W` keys, the query's own included |
    | `#tfm.mask<band<L, R>>` | [p-L, p+R] | local bidirectional attention |

    `W` must be at least 1; `L` and `R` must be non-negative.
  }];
  let parameters = (ins "MaskKind":$kind, "int64_t":$left, "int64_t":$right);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Marks an unbounded side of the band.
    static constexpr int64_t kUnbounded = -1;

    static MaskAttr getNone(::mlir::MLIRContext *context);
    static MaskAttr getCausal(::mlir::MLIRContext *context);
    static MaskAttr getSlidingWindow(::mlir::MLIRContext *context,
                                     int64_t window);
    static MaskAttr getBand(::mlir::MLIRContext *context, int64_t left,
                            int64_t right);

    /// Window size of a sliding-window mask.
    int64_t getWindow() const { return getLeft() + 1; }
    bool isNone() const { return getKind() == MaskKind::none; }

    /// Whether key position `key` is visible from absolute query position
    /// `query`.
    bool isVisible(int64_t query, int64_t key) const;

    /// The mask that lets through exactly what both masks let through.
    MaskAttr intersect(MaskAttr other) const;
  }];
}

def Tfm_RopeScalingAttr : Tfm_Attr<"RopeScaling", "rope_scaling"> {
  let summary = "Llama 3's scaling of the RoPE frequencies";
  let description = [{
    Stretches the rotations to contexts longer than a model was trained on,
    as Llama 3.1 and 3.2 do (Hugging Face `rope_scaling` of type `llama3`):
    each pair's inverse frequency `f = theta^(-2k/D)` has the wavelength
    `2π/f`; with `L` = `original_max_positions`, wavelengths below
    `L / high_freq_factor` keep `f`, those above `L / low_freq_factor` take
    `f / factor`, and those between blend the two with weight
    `s = (L/wavelength - low_freq_factor) / (high_freq_factor -
    low_freq_factor)`: `(1 - s)·f/factor + s·f`.

    ```mlir
    #tfm.rope_scaling<llama3, factor = 8.0, low_freq_factor = 1.0,
                      high_freq_factor = 4.0, original_max_positions = 8192>
    ```

    `factor`, `low_freq_factor` and `original_max_positions` must be
    positive and `high_freq_factor` larger than `low_freq_factor`.
  }];
  let parameters = (ins APFloatParameter<"frequency divisor">:$factor,
                        APFloatParameter<"low-frequency bound">:$lowFreqFactor,
                        APFloatParameter<"high-frequency bound">:$highFreqFactor,
                        "int64_t":$originalMaxPositions);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The scaled inverse frequency of pair `pair` of a head of `headDim`
    /// features (in f64, as the RoPE lowering uses it).
    double inverseFrequency(int64_t pair, int64_t headDim, double theta) const;
  }];
}

def Tfm_RopeAttr : Tfm_Attr<"Rope", "rope"> {
  let summary = "rotary position embedding configuration";
  let description = [{
    Configures the rotary position embedding a composite op applies to its
    queries and keys: `#tfm.rope<theta = 10000.0, style = half>`, with
    Llama 3's frequency scaling `#tfm.rope<theta = 5.0e+05, style = half,
    scaling = #tfm.rope_scaling<...>>`. See `tfm.rope` for the meaning of
    `theta` and `style`.
  }];
  let parameters = (ins APFloatParameter<"rotation base">:$theta,
                        "RopeStyle":$style,
                        OptionalParameter<"RopeScalingAttr">:$scaling);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TFM_DIALECT_TFM_IR_TFMATTRS_TD
