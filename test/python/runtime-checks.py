# RUN: %python %s %t
#
# What the runtime checks before compiled code touches memory: out= buffers
# (count, dtype, shape, layout, writability, aliasing) for calls and
# Library.call, inputs that are not arrays of the manifest's dtype; and
# to_bf16 on NaNs, infinities, ties and subnormals against a float64
# reference.

import pathlib
import sys

import numpy as np

from harness import expect
from tfm import compiler, runtime

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(5)

config = {"vocab_size": 50, "d_model": 32, "num_layers": 1, "num_heads": 4,
          "num_kv_heads": 2, "d_ff": 48, "tie_embeddings": True}
library = runtime.Library(compiler.compile_model(config, out / "model.so"))
forward = library["forward"]
# The f32 weights packed once (Library.prepare), in the order forward takes
# them.
prepared = library.prepare({s["name"]: (rng.standard_normal(s["shape"]) * 0.2).astype(np.float32)
                            for s in library.given_inputs("forward")[2:]})
params = [prepared[s["name"]] for s in forward.inputs[2:]]
last = forward.inputs[-1]["name"]
ids = rng.integers(0, 50, (2, 5)).astype(np.int32)
positions = np.tile(np.arange(5, dtype=np.int32), (2, 1))
inputs = [ids, positions, *params]
shape = (2, 5, 50)
expected = forward(*inputs)
assert expected.shape == shape


def untouched(buffer):
    """`buffer` filled with a marker, to check nothing wrote into it."""
    buffer[...] = 7
    return buffer


def call_with(*buffers):
    return lambda: forward(*inputs, out=list(buffers))


# A correct out= call writes into and returns the caller's buffers.
buffer = np.full(shape, np.nan, np.float32)
assert forward(*inputs, out=[buffer]) is buffer
assert np.array_equal(buffer, expected)
assert forward(*inputs, out=(buffer,)) is buffer
print("PASS out= returns the buffer it was given, with the allocated result")

# Count: exactly one array per output, in a list or tuple.
good = np.empty(shape, np.float32)
expect(TypeError, "forward: out= must be a list of 1 output arrays, got 0", call_with())
expect(TypeError, "forward: out= must be a list of 1 output arrays, got 2",
       call_with(good, np.empty(shape, np.float32)))
expect(TypeError, "got ndarray", lambda: forward(*inputs, out=good))
expect(TypeError, "output 'logits' must be a numpy.ndarray, got list",
       call_with(good.tolist()))

# Dtype and shape: static dims, dims sized from inputs, rank.
expect(TypeError, "forward: output 'logits' must be [2, 5, 50] f32, got [2, 5, 50] f16",
       call_with(np.empty(shape, np.float16)))
expect(TypeError, "output 'logits' must be f32 (float32), got float64",
       call_with(np.empty(shape, np.float64)))
expect(runtime.ShapeError, "output 'logits' must be [2, 5, 50] f32, got [2, 5, 49] f32",
       call_with(np.empty((2, 5, 49), np.float32)))
expect(runtime.ShapeError, "got [2, 4, 50]", call_with(np.empty((2, 4, 50), np.float32)))
expect(runtime.ShapeError, "got [3, 5, 50]", call_with(np.empty((3, 5, 50), np.float32)))
expect(runtime.ShapeError, "got [500]", call_with(np.empty(500, np.float32)))

# Layout and writability: never copied, never written when read-only.
expect(ValueError, "output 'logits' must be C-contiguous",
       call_with(np.empty((2, 5, 100), np.float32)[:, :, ::2]))
expect(ValueError, "must be C-contiguous",
       call_with(np.empty(shape, np.float32, order="F")))
unaligned = np.frombuffer(bytearray(4 * 500 + 1), np.float32, 500, offset=1)
expect(ValueError, "aligned", call_with(unaligned.reshape(shape)))
read_only = untouched(np.empty(shape, np.float32))
read_only.setflags(write=False)
expect(ValueError, "output 'logits' is read-only", call_with(read_only))
assert (read_only == 7).all()

# Aliasing: an output inside an input's buffer.
embedding = params[0].copy()
alias = embedding.reshape(-1)[:500].reshape(shape)
before = embedding.copy()
expect(ValueError, "output 'logits' overlaps 'model.embed_tokens.weight'",
       lambda: forward(ids, positions, embedding, *params[1:], out=[alias]))
assert np.array_equal(embedding, before)
ids_as_output = np.zeros(shape, np.float32)
expect(ValueError, "overlaps 'input_ids'",
       lambda: forward(ids_as_output.view(np.int32).reshape(-1)[:10].reshape(2, 5),
                       positions, *params, out=[ids_as_output]))

# Inputs: the manifest's dtype, never converted, except int64 token ids
# (NumPy's and PyTorch's default, and a Python list's), narrowed when they fit.
assert np.array_equal(forward(ids.astype(np.int64), positions, *params), expected)
assert np.array_equal(forward(ids.tolist(), positions.tolist(), *params), expected)
print("PASS int64 and list token ids are narrowed to int32")
expect(ValueError, "input 'input_ids' holds 4294967296, which does not fit int32",
       lambda: forward(np.where(ids == ids.max(), 2**32, ids), positions, *params))
expect(TypeError, "input 'input_ids' must be i32 (int32), got object",
       lambda: forward(ids.astype(object), positions, *params))
expect(TypeError, "input 'input_ids' is not an array",
       lambda: forward([[1, 2], [3]], positions, *params))
expect(TypeError, f"input '{last}' must be f32 (float32), got float64",
       lambda: forward(*inputs[:-1], params[-1].astype(np.float64)))
count = f"expected {len(inputs)} inputs, got {len(inputs) - 1}"
expect(TypeError, count, lambda: forward(*inputs[:-1]))
# Non-contiguous and unaligned inputs are copied (same values).
strided = np.repeat(ids, 2, axis=1)[:, ::2]
misaligned = np.frombuffer(bytearray(1) + params[-1].tobytes(), np.float32,
                           offset=1).reshape(params[-1].shape)
assert not misaligned.flags.aligned and not strided.flags.c_contiguous
assert np.array_equal(forward(strided, positions, *params[:-1], misaligned), expected)
print("PASS non-contiguous and unaligned inputs")

# Library.call checks as the entry point does when the manifest knows it.
buffer = untouched(np.empty(shape, np.float32))
assert library.call("forward", inputs, [buffer]) == 0
assert np.array_equal(buffer, expected)
assert library.call("forward", [ids + 50, positions, *params], [buffer]) == 3
expect(TypeError, "out= must be a list of 1 output arrays, got 0",
       lambda: library.call("forward", inputs, []))
expect(TypeError, "out= must be a list of 1 output arrays, got 2",
       lambda: library.call("forward", inputs, [buffer, buffer.copy()]))
expect(TypeError, count, lambda: library.call("forward", inputs[:-1], [buffer]))
expect(TypeError, "output 'logits' must be [2, 5, 50] f32",
       lambda: library.call("forward", inputs, [np.empty(shape, np.float16)]))
expect(KeyError, "no entry point 'backward'", lambda: library.call("backward", [], []))


# A bound call: checked once, run again on the same (updated) arrays.
ids_buffer = ids.copy()
bound = forward.bind(ids_buffer, positions, *params)
assert np.array_equal(bound(), expected)
ids_buffer[...] = np.roll(ids, 1)
assert np.array_equal(bound(), forward(np.roll(ids, 1), positions, *params))
ids_buffer[0, 0] = 50
expect(runtime.RuntimeCheckError, "must be in [0, 50)", bound)
bound_out = np.empty(shape, np.float32)
assert forward.bind(*inputs, out=[bound_out])() is bound_out
expect(ValueError, "overlaps 'model.embed_tokens.weight'",
       lambda: forward.bind(ids, positions, embedding, *params[1:], out=[alias])())
print("PASS bound calls rerun on updated arrays and check as calls do")


# to_bf16: round to nearest even; NaN stays a quiet NaN of its sign.
def bf16_magnitude(code):
    """|value| of bf16 codes as float64; 0x7F80 counts as 2**128, the value
    the next binade would start at (rounding past the largest finite)."""
    exponent = (code >> 7).astype(np.float64)
    mantissa = (code & 0x7F).astype(np.float64) / 128
    return np.where(exponent == 0, mantissa * 2.0**-126,
                    (1 + mantissa) * 2.0 ** (exponent - 127))


def reference_bf16(bits):
    """bf16 codes of float32 bit patterns, by float64 arithmetic."""
    sign = (bits >> 16) & 0x8000
    low = (bits & 0x7FFFFFFF) >> 16  # the bf16 code truncated toward zero
    with np.errstate(invalid="ignore"):  # signalling NaNs
        value = np.abs(bits.view(np.float32).astype(np.float64))
        below = value - bf16_magnitude(low)
        above = bf16_magnitude(low + 1) - value
    up = (above < below) | ((above == below) & (low % 2 == 1))
    code = np.where(np.isnan(value), 0x7FC0,
                    np.where(np.isinf(value), 0x7F80, low + up))
    return (code | sign).astype(np.uint16)


def bf16_of(*patterns):
    return runtime.to_bf16(np.array(patterns, np.uint32).view(np.float32)).tolist()


assert bf16_of(0x7FC00000, 0xFFC00000) == [0x7FC0, 0xFFC0]
assert bf16_of(0x7F800001, 0xFF800001) == [0x7FC0, 0xFFC0]  # signalling: not inf
assert bf16_of(0x7FFFFFFF, 0xFFFFFFFF) == [0x7FC0, 0xFFC0]  # no carry out
assert bf16_of(0x7F800000, 0xFF800000) == [0x7F80, 0xFF80]
assert bf16_of(0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000) == [0x7F80, 0x7F7F, 0x7F80]
assert bf16_of(0x3F808000, 0x3F818000, 0x3F808001) == [0x3F80, 0x3F82, 0x3F81]
assert bf16_of(0x00000001, 0x00008000, 0x00018000, 0x80008001) == [0, 0, 2, 0x8001]
assert np.isnan(runtime.from_bf16(runtime.to_bf16(np.float32(np.nan))))
highs = np.arange(1 << 16, dtype=np.uint32) << 16
lows = np.array([0, 1, 0x3FFF, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF], np.uint32)
bits = np.concatenate([(highs[:, None] | lows).reshape(-1),
                       rng.integers(0, 1 << 32, 1 << 21, dtype=np.uint32)])
mismatch = runtime.to_bf16(bits.view(np.float32)) != reference_bf16(bits)
assert not mismatch.any(), [hex(b) for b in bits[mismatch][:8]]
print(f"PASS to_bf16 matches the reference on {bits.size} float32 patterns")
print("all runtime checks passed")
