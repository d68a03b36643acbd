"""Writes Hugging Face model directories (config.json only) into argv[1]:
small Llama, Llama-3 style (GQA, rope_theta 5e5), Mistral (sliding window),
Qwen2 (q/k/v biases) and GPT-2 configs as transformers writes them, and configs with a field
tfm cannot honour."""

import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])

LLAMA = {"architectures": ["LlamaForCausalLM"], "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
         "hidden_act": "silu", "hidden_size": 64, "initializer_range": 0.02,
         "intermediate_size": 96, "max_position_embeddings": 2048,
         "model_type": "llama", "num_attention_heads": 8, "num_hidden_layers": 2,
         "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-06,
         "rope_scaling": None, "rope_theta": 500000.0, "tie_word_embeddings": False,
         "torch_dtype": "float32", "transformers_version": "4.40.0",
         "use_cache": True, "vocab_size": 101}
MISTRAL = dict(LLAMA, architectures=["MistralForCausalLM"], model_type="mistral",
               sliding_window=4, rope_theta=10000.0)
GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1,
        "eos_token_id": 50256, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2", "n_ctx": 64, "n_embd": 32, "n_head": 4, "n_inner": None,
        "n_layer": 2, "n_positions": 64, "resid_pdrop": 0.1, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True}},
        "vocab_size": 97}

QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
         "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu",
         "hidden_size": 64, "initializer_range": 0.02, "intermediate_size": 96,
         "max_position_embeddings": 32768, "max_window_layers": 21,
         "model_type": "qwen2", "num_attention_heads": 8, "num_hidden_layers": 2,
         "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
         "sliding_window": 32768, "tie_word_embeddings": True,
         "torch_dtype": "float32", "transformers_version": "4.43.1",
         "use_cache": True, "use_sliding_window": False, "vocab_size": 101}

configs = {
    "llama": LLAMA, "mistral": MISTRAL, "gpt2": GPT2,
    "llama3-rope-scaling": dict(LLAMA, rope_scaling={
        "factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
        "original_max_position_embeddings": 64, "rope_type": "llama3"}),
    "linear-rope-scaling": dict(LLAMA, rope_scaling={"factor": 2.0, "rope_type": "linear"}),
    "head-dim": dict(LLAMA, head_dim=12),
    "unknown-field": dict(LLAMA, quantization_config={"bits": 4}),
    "qwen2": QWEN2,
    "qwen2-window": dict(QWEN2, use_sliding_window=True),
    "phi3": dict(LLAMA, architectures=["Phi3ForCausalLM"]),
    "gelu-llama": dict(LLAMA, hidden_act="gelu"),
    "not-a-model": {},
}
for name, config in configs.items():
    (out / name).mkdir(parents=True, exist_ok=True)
    (out / name / "config.json").write_text(json.dumps(config, indent=2))
(out / "empty").mkdir(parents=True, exist_ok=True)
