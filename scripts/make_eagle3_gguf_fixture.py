#!/usr/bin/python3
"""Writes llama.cpp's EAGLE-3 GGUF fixtures (tests/data/eagle3/gguf/) from the SafeAILab-layout ones.

Not part of the build: the files are committed. To regenerate them (Debian's python3-torch and
python3-numpy), after scripts/make_eagle3_fixture.py's checkpoints exist:

    git clone https://github.com/SafeAILab/EAGLE /tmp/EAGLE   # made with cb7e0841fe0c (2026-02-19)
    /usr/bin/python3 scripts/make_eagle3_gguf_fixture.py --eagle-repo /tmp/EAGLE

The conversion follows llama.cpp's converter as read (not copied) at ggml-org/llama.cpp commit
0274f0fc7d7f: conversion/llama.py (LlamaModel with is_eagle3) for names and keys, and
src/models/eagle3.cpp for what the runtime reads:
  - general.architecture "eagle3"; eagle3.{context_length, embedding_length, feed_forward_length,
    block_count = 1, attention.head_count, attention.head_count_kv, rope.freq_base,
    attention.layer_norm_rms_epsilon, vocab_size, rope.dimension_count}; eagle3.extract_layers (3
    INT32), eagle3.target_hidden_size (UINT32), eagle3.norm_before_residual (BOOL, false).
  - tensors: fc.weight; midlayer.* renamed to blk.0.* with hidden_norm -> attn_norm_2,
    input_layernorm -> attn_norm, post_attention_layernorm -> ffn_norm, q/k/v/o_proj ->
    attn_q/k/v/output, gate/up/down_proj -> ffn_gate/up/down; norm -> output_norm; lm_head ->
    output; q_proj and k_proj rows permuted by LlamaModel.permute (rotate-half to adjacent pairs);
    d2t written as I64 target ids (offset + index); t2d dropped. All F32 (`--outtype f32`), or
    matrices F16 and vectors F32 (`--outtype f16`).
  - not written: the target's tokenizer, which the converter copies in (this engine reads the
    target's own).

Three files:
  layers-0-2-4.gguf    tests/data/eagle3/layers-0-2-4 with extract_layers [0, 2, 4] (the layers its
                       config names; llama.cpp's converter itself always writes 2, L/2, L-3).
  layers-0-2-4-f16.gguf  the same with its matrices in F16, as the converter's default output type
                       writes them (norms stay F32); its chain is the reference's on the rounded weights.
  llama-cpp-rule.gguf  tests/data/eagle3/default as llama.cpp's converter writes it for a 5-layer
                       target: extract_layers [2, 2, 2]. llama.cpp runs fc over the input of layer 2
                       three times over (SafeAILab's own code skips fc for that checkpoint), so its
                       expected chain is SafeAILab's cnets.Model given that 3H-wide feature.
Each gets <name>.expected.json: the first chain of topK_genrate (top_k 1, 6 levels), computed by
SafeAILab's cnets.Model and again by make_eagle3_fixture.independent_draft, which must agree.
The script reads each GGUF back with a reader of its own and checks every tensor against the
checkpoint it came from, the permutation undone.
"""
import argparse
import json
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_eagle3_fixture as ref  # noqa: E402

OUT = os.path.join(ref.OUT, "gguf")

GGML_F32, GGML_F16, GGML_I64 = 0, 1, 27
KV_UINT32, KV_INT32, KV_FLOAT32, KV_BOOL, KV_STRING, KV_ARRAY = 4, 5, 6, 7, 8, 9
ALIGNMENT = 32
NP_TYPES = {GGML_F32: "<f4", GGML_F16: "<f2", GGML_I64: "<i8"}

RENAMES = {
    "midlayer.input_layernorm.weight": "blk.0.attn_norm.weight",
    "midlayer.hidden_norm.weight": "blk.0.attn_norm_2.weight",
    "midlayer.self_attn.q_proj.weight": "blk.0.attn_q.weight",
    "midlayer.self_attn.k_proj.weight": "blk.0.attn_k.weight",
    "midlayer.self_attn.v_proj.weight": "blk.0.attn_v.weight",
    "midlayer.self_attn.o_proj.weight": "blk.0.attn_output.weight",
    "midlayer.post_attention_layernorm.weight": "blk.0.ffn_norm.weight",
    "midlayer.mlp.gate_proj.weight": "blk.0.ffn_gate.weight",
    "midlayer.mlp.up_proj.weight": "blk.0.ffn_up.weight",
    "midlayer.mlp.down_proj.weight": "blk.0.ffn_down.weight",
    "norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
    "fc.weight": "fc.weight",
}


def permute(w, n_head):
    """llama.cpp's LlamaModel.permute: rows from rotate-half order to adjacent pairs, per head."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


# ---------------------------------------------------------------------------------------------
# GGUF v3, written and read here


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv_bytes(key, kind, value):
    out = gguf_str(key) + struct.pack("<I", kind)
    if kind == KV_STRING:
        return out + gguf_str(value)
    if kind == KV_ARRAY:
        item, items = value
        assert item == KV_INT32
        return out + struct.pack("<IQ", item, len(items)) + b"".join(struct.pack("<i", v) for v in items)
    return out + struct.pack({KV_UINT32: "<I", KV_INT32: "<i", KV_FLOAT32: "<f", KV_BOOL: "<?"}[kind], value)


def write_gguf(path, kv, tensors):
    """kv: [(key, kind, value)]; tensors: [(name, np.ndarray, ggml type)], shapes outermost first."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    head += b"".join(kv_bytes(*e) for e in kv)
    blobs, off = [], 0
    for name, arr, ggml in tensors:
        head += gguf_str(name) + struct.pack("<I", arr.ndim)
        head += b"".join(struct.pack("<Q", n) for n in reversed(arr.shape))  # ne[0] innermost
        head += struct.pack("<IQ", ggml, off)
        data = arr.astype(NP_TYPES[ggml]).tobytes()
        data += b"\0" * (-len(data) % ALIGNMENT)
        blobs.append(data)
        off += len(data)
    head += b"\0" * (-len(head) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(head + b"".join(blobs))


def read_gguf(path):
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:4] == b"GGUF"
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", raw, 4)
    assert version == 3
    pos = 24

    def string():
        nonlocal pos
        (n,) = struct.unpack_from("<Q", raw, pos)
        s = raw[pos + 8:pos + 8 + n].decode()
        pos += 8 + n
        return s

    def scalar(kind):
        nonlocal pos
        fmt = {KV_UINT32: "<I", KV_INT32: "<i", KV_FLOAT32: "<f", KV_BOOL: "<?"}[kind]
        (v,) = struct.unpack_from(fmt, raw, pos)
        pos += struct.calcsize(fmt)
        return v

    kv = {}
    for _ in range(n_kv):
        key = string()
        (kind,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        if kind == KV_STRING:
            kv[key] = string()
        elif kind == KV_ARRAY:
            item, n = struct.unpack_from("<IQ", raw, pos)
            pos += 12
            kv[key] = [scalar(item) for _ in range(n)]
        else:
            kv[key] = scalar(kind)
    infos = []
    for _ in range(n_tensors):
        name = string()
        (nd,) = struct.unpack_from("<I", raw, pos)
        dims = struct.unpack_from("<%dQ" % nd, raw, pos + 4)
        ggml, off = struct.unpack_from("<IQ", raw, pos + 4 + 8 * nd)
        pos += 4 + 8 * nd + 12
        infos.append((name, tuple(reversed(dims)), ggml, off))
    base = pos + (-pos % ALIGNMENT)
    tensors = {}
    for name, shape, ggml, off in infos:
        n = int(np.prod(shape))
        tensors[name] = np.frombuffer(raw, dtype=NP_TYPES[ggml], count=n, offset=base + off).reshape(shape)
    return kv, tensors


# ---------------------------------------------------------------------------------------------


def convert(ckpt_dir, target_cfg, extract_layers, f16=False):
    """f16: matrices as F16 (what the converter's default --outtype gives), norms F32 as it keeps them."""
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        cfg = json.load(f)
    st = ref.read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    H, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    a = "eagle3."
    kv = [
        ("general.architecture", KV_STRING, "eagle3"),
        ("general.name", KV_STRING, "stories260K EAGLE-3 fixture"),
        (a + "context_length", KV_UINT32, cfg["max_position_embeddings"]),
        (a + "embedding_length", KV_UINT32, H),
        (a + "feed_forward_length", KV_UINT32, cfg["intermediate_size"]),
        (a + "block_count", KV_UINT32, cfg["num_hidden_layers"]),
        (a + "attention.head_count", KV_UINT32, nh),
        (a + "attention.head_count_kv", KV_UINT32, nkv),
        (a + "rope.freq_base", KV_FLOAT32, cfg["rope_theta"]),
        (a + "attention.layer_norm_rms_epsilon", KV_FLOAT32, cfg["rms_norm_eps"]),
        ("general.file_type", KV_UINT32, 1 if f16 else 0),  # LLAMA_FTYPE_MOSTLY_F16 / ALL_F32
        (a + "vocab_size", KV_UINT32, cfg["vocab_size"]),
        (a + "rope.dimension_count", KV_UINT32, H // nh),
        (a + "extract_layers", KV_ARRAY, (KV_INT32, extract_layers)),
        (a + "target_hidden_size", KV_UINT32, cfg.get("target_hidden_size", target_cfg["dim"])),
        (a + "norm_before_residual", KV_BOOL, bool(cfg.get("norm_before_residual", False))),
    ]
    tensors = []
    for name in ["fc.weight"] + [n for n in RENAMES if n != "fc.weight"]:
        w = st[name].numpy()
        if name.endswith("q_proj.weight"):
            w = permute(w, nh)
        elif name.endswith("k_proj.weight"):
            w = permute(w, nkv)
        tensors.append((RENAMES[name], np.ascontiguousarray(w), GGML_F16 if f16 and w.ndim == 2 else GGML_F32))
    d2t = st["d2t"].numpy().reshape(-1) + np.arange(st["d2t"].numel(), dtype=np.int64)  # target ids
    assert np.all((d2t >= 0) & (d2t < target_cfg["vocab"])) and np.unique(d2t).size == d2t.size
    tensors.append(("d2t", d2t, GGML_I64))
    return kv, tensors, st, (nh, nkv)


def check_round_trip(path, st, heads, extract_layers):
    kv, back = read_gguf(path)
    assert kv["general.architecture"] == "eagle3" and kv["eagle3.extract_layers"] == extract_layers
    nh, nkv = heads
    for name, gname in RENAMES.items():
        w = back[gname]
        if name.endswith("q_proj.weight"):
            w = unpermute(w, nh)
        elif name.endswith("k_proj.weight"):
            w = unpermute(w, nkv)
        want = st[name].numpy()
        assert np.array_equal(w.astype(np.float32), want.astype(w.dtype).astype(np.float32)), name
    offsets = back["d2t"] - np.arange(back["d2t"].size)
    assert np.array_equal(offsets, st["d2t"].numpy()), "d2t"
    return len(back)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eagle-repo", required=True, help="a checkout of github.com/SafeAILab/EAGLE")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    w = ref.load_llama2c(ref.MODEL)
    c = w["cfg"]
    L = c["n_layers"]
    cnets = ref.import_safeailab(args.eagle_repo)
    os.makedirs(args.out, exist_ok=True)
    files = [("layers-0-2-4", "layers-0-2-4", [0, 2, 4], False),
             ("layers-0-2-4-f16", "layers-0-2-4", [0, 2, 4], True),
             ("llama-cpp-rule", "default", [2, L // 2, L - 3], False)]  # conversion/llama.py's extract_layers
    for name, source, layers, f16 in files:
        src = os.path.join(ref.OUT, source)
        kv, tensors, st, heads = convert(src, c, layers, f16)
        path = os.path.join(args.out, name + ".gguf")
        write_gguf(path, kv, tensors)
        n = check_round_trip(path, st, heads, layers)

        logits, feats = ref.target_forward(w, ref.PROMPT_IDS, set(layers))
        t0 = int(logits[-1].argmax())
        hidden = torch.cat([feats[l] for l in layers], -1)[None]  # llama.cpp: the three inputs side by side
        input_ids = torch.tensor([ref.PROMPT_IDS + [t0]])
        if f16:  # the reference runs the weights as the file holds them: matrices rounded to f16
            st = {k: v.half().float() if v.dim() == 2 else v for k, v in st.items()}
            run_dir = tempfile.mkdtemp()
            shutil.copy(os.path.join(src, "config.json"), run_dir)
            ref.write_safetensors(os.path.join(run_dir, "model.safetensors"), st)
        else:
            run_dir = src
        chain, gaps, _, fc_applied = ref.run_safeailab(cnets, run_dir, w["emb"], hidden, input_ids)
        if f16:
            shutil.rmtree(run_dir)
        assert fc_applied
        mine = ref.independent_draft(st, w["emb"], hidden[0], ref.PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"])
        for (i, p, _), e in zip(mine, chain):
            assert i == e["draft_id"] and abs(p - e["prob"]) < 1e-5, (mine, chain)
        if source == name:  # the same checkpoint and features as its folder: the same chain
            with open(os.path.join(src, "expected.json")) as f:
                assert json.load(f)["chain"] == chain
        expected = {"prompt": ref.PROMPT, "prompt_ids": ref.PROMPT_IDS, "first_token": t0,
                    "extract_layers": layers, "layers": list(dict.fromkeys(layers)), "fc_applied": True,
                    "chain": chain}
        with open(os.path.join(args.out, name + ".expected.json"), "w") as f:
            json.dump(expected, f, indent=2)
            f.write("\n")
        print(f"{name}.gguf from {source}/: extract_layers {layers}, {n} tensors read back equal; chain "
              + " ".join(f"{e['token']}({e['prob']:.4f})" for e in chain) + f"; smallest top-1 gap {min(gaps):.4f}")


if __name__ == "__main__":
    main()
