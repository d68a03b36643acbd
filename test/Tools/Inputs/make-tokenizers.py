"""Writes small hand-written tokenizers into argv[1], whose encodings of the
test's texts were worked out by hand (tfm-run-tokenizers.test):
- gpt2/tokenizer.json: GPT-2's format (ByteLevel pre-tokenizer with its
  regex, merges as "left right" strings, an added <|endoftext|>);
- llama3/tokenizer.json: Llama 3's (a Split with its regex, then ByteLevel;
  merges as pairs; ignore_merges; a template that prepends BOS);
- broken variants, each with one thing tfm must refuse;
- sp/: a text for spm_train and a tokenizer_config.json.
Ids: byte b is token b; merges make 256-265 and 267; 266 is a whole word
only ignore_merges reaches; the added tokens are 268 and 269. A model with
vocab_size 270 can emit every id."""

import copy
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])


def byte_characters():
    """GPT-2's printable stand-ins for the 256 byte values."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD))
                 + list(range(0xAE, 0x100)))
    characters, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            characters[byte] = chr(byte)
        else:
            characters[byte] = chr(256 + extra)
            extra += 1
    return characters


chars = byte_characters()


def mapped(text):
    return "".join(chars[b] for b in text.encode())


MERGES = [(" ", "t"), ("h", "e"), (" t", "he"), ("c", "a"), ("ca", "t"),
          (" ", "cat"), ("'", "s"), ("1", "2"), ("é", ""), (" ", " ")]
vocab = {chars[b]: b for b in range(256)}
merges = []
for left, right in MERGES:
    if left == "é":  # é is two bytes: merge them
        left, right = mapped("é")[0], mapped("é")[1]
    else:
        left, right = mapped(left), mapped(right)
    merges.append((left, right))
    vocab[left + right] = 256 + len(merges) - 1
vocab[mapped(" café")] = 266
merges.append((mapped("\n"), mapped("\n")))
vocab[mapped("\n\n")] = 267

added = lambda content, id: {"id": id, "content": content, "single_word": False,
                             "lstrip": False, "rstrip": False, "normalized": False,
                             "special": True}
GPT2 = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [added("<|endoftext|>", 268)],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                      "trim_offsets": True, "use_regex": True},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                       "trim_offsets": False, "use_regex": True},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": "", "end_of_word_suffix": "",
              "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
              "merges": [f"{l} {r}" for l, r in merges]},
}
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3 = copy.deepcopy(GPT2)
LLAMA3["added_tokens"] = [added("<|end_of_text|>", 268), added("<|begin_of_text|>", 269)]
LLAMA3["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated",
     "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
     "use_regex": False}]}
bos = {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}
LLAMA3["post_processor"] = {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
     "use_regex": True},
    {"type": "TemplateProcessing",
     "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
     "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, bos,
              {"Sequence": {"id": "B", "type_id": 1}}],
     "special_tokens": {"<|begin_of_text|>": {
         "id": "<|begin_of_text|>", "ids": [269], "tokens": ["<|begin_of_text|>"]}}}]}
LLAMA3["model"]["merges"] = [[l, r] for l, r in merges]
LLAMA3["model"]["ignore_merges"] = True


def variant(base, change):
    config = copy.deepcopy(base)
    change(config)
    return config


tokenizers = {
    "gpt2": GPT2,
    "llama3": LLAMA3,
    "wordpiece": variant(GPT2, lambda c: c["model"].update(type="WordPiece")),
    "lowercase": variant(GPT2, lambda c: c.update(normalizer={"type": "Lowercase"})),
    "other-regex": variant(LLAMA3, lambda c: c["pre_tokenizer"]["pretokenizers"][0]
                           .update(pattern={"Regex": r"\w+|\s+"})),
    "bad-merge": variant(GPT2, lambda c: c["model"]["merges"].append("x yz")),
    "huge-id": variant(GPT2, lambda c: c["model"]["vocab"].update({"zz": 1 << 40})),
    "shared-id": variant(GPT2, lambda c: c["model"]["vocab"].update({"zz": 5})),
    "lstrip": variant(GPT2, lambda c: c["added_tokens"][0].update(lstrip=True)),
    "not-json": "{\"model\": ",
}
for name, config in tokenizers.items():
    (out / name).mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config, ensure_ascii=False)
    (out / name / "tokenizer.json").write_text(text)

(out / "sp").mkdir(parents=True, exist_ok=True)
(out / "sp" / "corpus.txt").write_text(
    "the cat sat on the mat\nthe dog sat on the log\na cat and a dog\n"
    "cats and dogs sit on mats and logs\nthe end of the story\n" * 4)
(out / "sp-no-bos").mkdir(parents=True, exist_ok=True)
(out / "sp-no-bos" / "tokenizer_config.json").write_text('{"add_bos_token": false}')

# The test's texts, line breaks included.
(out / "gpt2.txt").write_text("the cat's 123 café  \n\nhi<|endoftext|>!")
(out / "llama3.txt").write_text("the CAT'S 12345 (cat café  \n\n hi")

# A model whose vocabulary covers every id of the tokenizers above.
(out / "model.json").write_text(json.dumps(
    {"vocab_size": 270, "d_model": 32, "num_layers": 1, "num_heads": 4,
     "num_kv_heads": 2, "d_ff": 48, "tie_embeddings": True}))
