#!/usr/bin/python3
"""Writes llama.cpp's EAGLE-3 GGUF fixtures (tests/data/eagle3/gguf/) from the SafeAILab-layout ones.

Not part of the build: the files are committed. To regenerate them (Debian's python3-torch and
python3-numpy), after scripts/make_eagle3_fixture.py's checkpoints exist:

    git clone https://github.com/SafeAILab/EAGLE /tmp/EAGLE   # made with cb7e0841fe0c (2026-02-19)
    /usr/bin/python3 scripts/make_eagle3_gguf_fixture.py --eagle-repo /tmp/EAGLE

The conversion follows llama.cpp's converter as read (not copied) at ggml-org/llama.cpp commit
0274f0fc7d7f (conversion/llama.py, LlamaModel with is_eagle3, for names and keys;
src/models/eagle3.cpp for what the runtime reads), with the key names its converter writes since
(de3ff81, checked against a file it wrote: ../shared/testdata/eagle3/):
  - general.architecture "eagle3"; eagle3.{context_length, embedding_length, feed_forward_length,
    block_count = 1, attention.head_count, attention.head_count_kv, rope.freq_base,
    attention.layer_norm_rms_epsilon, vocab_size, rope.dimension_count}; eagle3.target_layers (3
    INT32; older converters named it eagle3.extract_layers), eagle3.target_hidden_size (UINT32),
    eagle3.norm_before_residual (BOOL, false), eagle3.norm_before_fc (BOOL).
  - tensors: fc.weight; midlayer.* renamed to blk.0.* with hidden_norm -> attn_norm_2,
    input_layernorm -> attn_norm, post_attention_layernorm -> ffn_norm, q/k/v/o_proj ->
    attn_q/k/v/output, gate/up/down_proj -> ffn_gate/up/down; norm -> output_norm; lm_head ->
    output; q_proj and k_proj rows permuted by LlamaModel.permute (rotate-half to adjacent pairs);
    d2t written as I64 target ids (offset + index); t2d dropped. All F32 (`--outtype f32`), or
    matrices F16 and vectors F32 (`--outtype f16`).
  - not written: the target's tokenizer, which the converter copies in (this engine reads the
    target's own).

Four files:
  layers-0-2-4.gguf    tests/data/eagle3/layers-0-2-4 with target_layers [0, 2, 4] (the layers its
                       config names; llama.cpp's converter itself always writes 2, L/2, L-3).
  layers-0-2-4-f16.gguf  the same with its matrices in F16, as the converter's default output type
                       writes them (norms stay F32); its chain is the reference's on the rounded weights.
  llama-cpp-rule.gguf  tests/data/eagle3/default as llama.cpp's converter writes it for a 5-layer
                       target: target_layers [2, 2, 2]. llama.cpp runs fc over the input of layer 2
                       three times over (SafeAILab's own code skips fc for that checkpoint), so its
                       expected chain is SafeAILab's cnets.Model given that 3H-wide feature.
  norm-before-fc.gguf  layers-0-2-4-f16.gguf with eagle3.norm_before_fc true and seeded gains
                       enc.output_norm.weight (3H, F32): llama.cpp's src/models/eagle3.cpp runs an
                       RMSNorm with them over the three inputs side by side before fc (EAGLE-3.1's
                       drafters). SafeAILab's code has no such norm; the norm is linear in its gains,
                       so its expected chain is cnets.Model given the feature divided by its RMS and
                       fc's columns multiplied by the gains (and, independently, the script's own
                       draft given the normed feature and fc as it is).
Each gets <name>.expected.json: the first chain of topK_genrate (top_k 1, 6 levels), computed by
SafeAILab's cnets.Model and again by make_eagle3_fixture.independent_draft, which must agree.
The script reads each GGUF back with a reader of its own and checks every tensor against the
checkpoint it came from, the permutation undone.

With --llamacpp FILE it writes instead the expected chain of a file llama.cpp's own converter wrote
(../shared/testdata/eagle3/stories260K-eagle3-llamacpp-f16.gguf, which is not committed here):
the file read back into SafeAILab's layout (q/k permutation undone, d2t's target ids as offsets),
run by cnets.Model and independent_draft, to gguf/stories260K-eagle3-llamacpp-f16.expected.json.
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
FC_NORM = "enc.output_norm.weight"  # llama.cpp's LLM_TENSOR_ENC_OUTPUT_NORM: norm_before_fc's gains
FC_NORM_SEED = 2027
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
        if kind == KV_STRING:
            return string()
        fmt = {0: "<B", 1: "<b", 2: "<H", 3: "<h", KV_UINT32: "<I", KV_INT32: "<i", KV_FLOAT32: "<f", KV_BOOL: "<?",
               10: "<Q", 11: "<q", 12: "<d"}[kind]
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


def convert(ckpt_dir, target_cfg, layers, f16=False, fc_norm=None):
    """f16: matrices as F16 (what the converter's default --outtype gives), norms F32 as it keeps them.
    fc_norm: norm_before_fc's gains (3H), or None."""
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
        (a + "target_layers", KV_ARRAY, (KV_INT32, layers)),
        (a + "target_hidden_size", KV_UINT32, cfg.get("target_hidden_size", target_cfg["dim"])),
        (a + "norm_before_residual", KV_BOOL, bool(cfg.get("norm_before_residual", False))),
        (a + "norm_before_fc", KV_BOOL, fc_norm is not None),
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
    if fc_norm is not None:
        tensors.append((FC_NORM, fc_norm.numpy(), GGML_F32))
    return kv, tensors, st, (nh, nkv)


def check_round_trip(path, st, heads, layers, fc_norm=None):
    kv, back = read_gguf(path)
    assert kv["general.architecture"] == "eagle3" and kv["eagle3.target_layers"] == layers
    assert kv["eagle3.norm_before_fc"] == (fc_norm is not None)
    if fc_norm is not None:
        assert np.array_equal(back[FC_NORM], fc_norm.numpy()), FC_NORM
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


def fc_norm_gains(H):
    """norm_before_fc's gains: seeded, well away from 1 so that they matter."""
    g = torch.Generator().manual_seed(FC_NORM_SEED)
    return (1.0 + 0.5 * torch.randn(3 * H, generator=g)).float()


def chains_agree(mine, chain):
    for (i, p, _), e in zip(mine, chain):
        assert i == e["draft_id"] and abs(p - e["prob"]) < 1e-5, (mine, chain)


def write_expected(path, expected):
    with open(path, "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


def chain_text(chain, gaps):
    return " ".join(f"{e['token']}({e['prob']:.4f})" for e in chain) + f"; smallest top-1 gap {min(gaps):.4f}"


def expected_of_llamacpp_file(path, w, cnets):
    """The converter's file back in SafeAILab's layout, run by cnets.Model and independent_draft."""
    c = w["cfg"]
    kv, t = read_gguf(path)
    assert kv["general.architecture"] == "eagle3" and not kv.get("eagle3.norm_before_fc", False)
    layers = kv["eagle3.target_layers"]
    H, nh, nkv = kv["eagle3.embedding_length"], kv["eagle3.attention.head_count"], kv["eagle3.attention.head_count_kv"]
    assert H == c["dim"] and kv["eagle3.target_hidden_size"] == H
    back = {name: torch.from_numpy(t[gname].astype(np.float32)) for name, gname in RENAMES.items()}
    back["midlayer.self_attn.q_proj.weight"] = torch.from_numpy(unpermute(t["blk.0.attn_q.weight"], nh).astype(np.float32))
    back["midlayer.self_attn.k_proj.weight"] = torch.from_numpy(unpermute(t["blk.0.attn_k.weight"], nkv).astype(np.float32))
    target_ids = torch.from_numpy(t["d2t"].astype(np.int64))
    back["d2t"] = target_ids - torch.arange(target_ids.numel(), dtype=torch.int64)
    t2d = torch.zeros(c["vocab"], dtype=torch.bool)
    t2d[target_ids] = True
    back["t2d"] = t2d
    config = ref.make_config(c, None)
    config.update(draft_vocab_size=int(target_ids.numel()), rms_norm_eps=float(kv["eagle3.attention.layer_norm_rms_epsilon"]),
                  rope_theta=float(kv["eagle3.rope.freq_base"]), intermediate_size=kv["eagle3.feed_forward_length"])
    logits, feats = ref.target_forward(w, ref.PROMPT_IDS, set(layers))
    t0 = int(logits[-1].argmax())
    hidden = torch.cat([feats[l] for l in layers], -1)[None]  # llama.cpp: the three inputs side by side
    run_dir = tempfile.mkdtemp()
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(config, f)
    ref.write_safetensors(os.path.join(run_dir, "model.safetensors"), back)
    chain, gaps, _, fc_applied = ref.run_safeailab(cnets, run_dir, w["emb"], hidden, torch.tensor([ref.PROMPT_IDS + [t0]]))
    shutil.rmtree(run_dir)
    assert fc_applied
    chains_agree(ref.independent_draft(back, w["emb"], hidden[0], ref.PROMPT_IDS[1:] + [t0], nh, nkv), chain)
    out = os.path.join(OUT, os.path.basename(path)[: -len(".gguf")] + ".expected.json")
    write_expected(out, {"prompt": ref.PROMPT, "prompt_ids": ref.PROMPT_IDS, "first_token": t0, "target_layers": layers,
                         "layers": list(dict.fromkeys(layers)), "fc_applied": True, "chain": chain})
    print(f"{os.path.basename(out)}: target_layers {layers}, draft vocabulary {target_ids.numel()}; chain "
          + chain_text(chain, gaps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eagle-repo", required=True, help="a checkout of github.com/SafeAILab/EAGLE")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--llamacpp", help="a file llama.cpp's converter wrote: write its expected chain only")
    args = ap.parse_args()
    torch.set_num_threads(1)
    w = ref.load_llama2c(ref.MODEL)
    c = w["cfg"]
    L = c["n_layers"]
    cnets = ref.import_safeailab(args.eagle_repo)
    if args.llamacpp:
        return expected_of_llamacpp_file(args.llamacpp, w, cnets)
    os.makedirs(args.out, exist_ok=True)
    gains = fc_norm_gains(c["dim"])
    files = [("layers-0-2-4", "layers-0-2-4", [0, 2, 4], False, None),
             ("layers-0-2-4-f16", "layers-0-2-4", [0, 2, 4], True, None),
             ("llama-cpp-rule", "default", [2, L // 2, L - 3], False, None),  # the converter's target_layers
             ("norm-before-fc", "layers-0-2-4", [0, 2, 4], True, gains)]
    for name, source, layers, f16, fc_norm in files:
        src = os.path.join(ref.OUT, source)
        kv, tensors, st, heads = convert(src, c, layers, f16, fc_norm)
        path = os.path.join(args.out, name + ".gguf")
        write_gguf(path, kv, tensors)
        n = check_round_trip(path, st, heads, layers, fc_norm)

        logits, feats = ref.target_forward(w, ref.PROMPT_IDS, set(layers))
        t0 = int(logits[-1].argmax())
        hidden = torch.cat([feats[l] for l in layers], -1)[None]  # llama.cpp: the three inputs side by side
        input_ids = torch.tensor([ref.PROMPT_IDS + [t0]])
        if f16:  # the reference runs the weights as the file holds them: matrices rounded to f16
            st = {k: v.half().float() if v.dim() == 2 else v for k, v in st.items()}
        run_st, run_hidden = st, hidden
        if fc_norm is not None:  # RMSNorm's gains moved into fc's columns; the feature over its RMS
            run_st = dict(st, **{"fc.weight": st["fc.weight"] * fc_norm[None, :]})
            run_hidden = ref.rmsnorm(hidden, torch.ones(hidden.shape[-1]))
        if f16 or fc_norm is not None:
            run_dir = tempfile.mkdtemp()
            shutil.copy(os.path.join(src, "config.json"), run_dir)
            ref.write_safetensors(os.path.join(run_dir, "model.safetensors"), run_st)
        else:
            run_dir = src
        chain, gaps, _, fc_applied = ref.run_safeailab(cnets, run_dir, w["emb"], run_hidden, input_ids)
        if run_dir != src:
            shutil.rmtree(run_dir)
        assert fc_applied
        mine_hidden = hidden[0] if fc_norm is None else ref.rmsnorm(hidden[0], fc_norm)
        chains_agree(ref.independent_draft(st, w["emb"], mine_hidden, ref.PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"]),
                     chain)
        if fc_norm is not None:  # the norm, and its gains, each change the chain past the tests' tolerance
            for other in (hidden[0], ref.rmsnorm(hidden[0], torch.ones(hidden.shape[-1]))):
                o = ref.independent_draft(st, w["emb"], other, ref.PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"])
                assert max(abs(p - e["prob"]) for (_, p, _), e in zip(o, chain)) > 1e-3
        if source == name:  # the same checkpoint and features as its folder: the same chain
            with open(os.path.join(src, "expected.json")) as f:
                assert json.load(f)["chain"] == chain
        expected = {"prompt": ref.PROMPT, "prompt_ids": ref.PROMPT_IDS, "first_token": t0,
                    "target_layers": layers, "layers": list(dict.fromkeys(layers)), "fc_applied": True,
                    "chain": chain}
        if fc_norm is not None:
            expected["norm_before_fc"] = True
        write_expected(os.path.join(args.out, name + ".expected.json"), expected)
        print(f"{name}.gguf from {source}/: target_layers {layers}, {n} tensors read back equal; chain "
              + chain_text(chain, gaps))


if __name__ == "__main__":
    main()
