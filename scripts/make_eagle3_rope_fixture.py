#!/usr/bin/python3
"""Writes the EAGLE-3 fixture with Llama 3's RoPE scaling, in both layouts.

Not part of the build: the files are committed. Regenerate after make_eagle3_fixture.py (Debian's
python3-torch and python3-numpy):

    /usr/bin/python3 scripts/make_eagle3_rope_fixture.py --eagle-repo /tmp/EAGLE

Llama 3.x drafters (SpecForge's configs, llama.cpp's GGUF of them) carry the target's
"rope_scaling": {"rope_type": "llama3", ...}. This writes tests/data/eagle3/layers-0-2-4-llama3-rope/
(layers-0-2-4's weights, its config.json with such a rope_scaling) and
gguf/layers-0-2-4-llama3-rope.gguf (the same as llama.cpp's converter writes it: rope_freqs.weight,
the per-frequency divisors of conversion/llama.py's generate_extra_tensors). The scaling is made to
matter at a 6-token prompt: original_max_position_embeddings 1024 and factor 32 on stories260K's
heads of 8 (frequencies 1, 0.1, 0.01, 0.001: the third is blended, the fourth divided by 32).

The chain's reference is SafeAILab's cnets.Model, whose rotary embedding knows no "llama3" type,
run with its inv_freq replaced by Hugging Face's Llama 3 frequencies (_compute_llama3_parameters, as
read), and make_eagle3_fixture.independent_draft with the same frequencies; they must agree. The
script checks that llama.cpp's divisors give the same frequencies, and that the chain differs from
the unscaled one by more than the tests' tolerance.
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_eagle3_fixture as ref  # noqa: E402
import make_eagle3_gguf_fixture as gguf  # noqa: E402

NAME = "layers-0-2-4-llama3-rope"
LAYERS = [0, 2, 4]
ROPE = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024}


def llama3_inv_freq(theta, head_dim, r):
    """Hugging Face's Llama 3 frequencies: long wavelengths divided by factor, short ones kept, a
    blend between."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    low_wavelen = r["original_max_position_embeddings"] / r["low_freq_factor"]
    high_wavelen = r["original_max_position_embeddings"] / r["high_freq_factor"]
    wavelen = 2 * math.pi / inv
    out = torch.where(wavelen > low_wavelen, inv / r["factor"], inv)
    smooth = (r["original_max_position_embeddings"] / wavelen - r["low_freq_factor"]) / (
        r["high_freq_factor"] - r["low_freq_factor"])
    smoothed = (1 - smooth) * out / r["factor"] + smooth * out
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, out)


def llama_cpp_rope_factors(theta, head_dim, r):
    """conversion/llama.py generate_extra_tensors: a divisor per frequency (rope_freqs.weight)."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    low_wavelen = r["original_max_position_embeddings"] / r["low_freq_factor"]
    high_wavelen = r["original_max_position_embeddings"] / r["high_freq_factor"]
    out = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(r["factor"])
        else:
            smooth = (r["original_max_position_embeddings"] / wavelen - r["low_freq_factor"]) / (
                r["high_freq_factor"] - r["low_freq_factor"])
            out.append(1 / ((1 - smooth) / r["factor"] + smooth))
    return np.array(out, dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eagle-repo", required=True, help="a checkout of github.com/SafeAILab/EAGLE")
    args = ap.parse_args()
    torch.set_num_threads(1)
    w = ref.load_llama2c(ref.MODEL)
    c = w["cfg"]
    hd = c["dim"] // c["n_heads"]
    cnets = ref.import_safeailab(args.eagle_repo)

    src = os.path.join(ref.OUT, "layers-0-2-4")
    dst = os.path.join(ref.OUT, NAME)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    theta = config["rope_theta"]
    config["rope_scaling"] = ROPE
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    shutil.copyfile(os.path.join(src, "model.safetensors"), os.path.join(dst, "model.safetensors"))

    inv = llama3_inv_freq(theta, hd, ROPE)
    factors = llama_cpp_rope_factors(theta, hd, ROPE)
    base = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    assert torch.allclose(base / torch.from_numpy(factors), inv, rtol=1e-6), (base / factors, inv)

    logits, feats = ref.target_forward(w, ref.PROMPT_IDS, set(LAYERS))
    t0 = int(logits[-1].argmax())
    hidden = torch.cat([feats[l] for l in LAYERS], -1)[None]
    input_ids = torch.tensor([ref.PROMPT_IDS + [t0]])
    # SafeAILab's Model from the unscaled config (its _init_rope raises on "llama3"), then the
    # Llama 3 frequencies put in its rotary embedding.
    chain, gaps, _, fc_applied = ref.run_safeailab(cnets, src, w["emb"], hidden, input_ids, inv_freq=inv)
    assert fc_applied
    st = ref.read_safetensors(os.path.join(src, "model.safetensors"))
    mine = ref.independent_draft(st, w["emb"], hidden[0], ref.PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"],
                                 inv_freq=inv)
    for (i, p, _), e in zip(mine, chain):
        assert i == e["draft_id"] and abs(p - e["prob"]) < 1e-5, (mine, chain)
    with open(os.path.join(src, "expected.json")) as f:
        unscaled = json.load(f)["chain"]
    dp = max(abs(a["prob"] - b["prob"]) for a, b in zip(chain, unscaled))
    same_tokens = [a["token"] for a in chain] == [b["token"] for b in unscaled]
    assert dp > 1e-3, dp  # the tests compare probabilities to 2e-5: they tell the two apart
    expected = {"prompt": ref.PROMPT, "prompt_ids": ref.PROMPT_IDS, "first_token": t0, "layers": LAYERS,
                "fc_applied": True, "rope_scaling": ROPE, "chain": chain}
    for path in (os.path.join(dst, "expected.json"), os.path.join(gguf.OUT, NAME + ".expected.json")):
        with open(path, "w") as f:
            json.dump(expected, f, indent=2)
            f.write("\n")

    kv, tensors, st, heads = gguf.convert(src, c, LAYERS)
    tensors.insert(1, ("rope_freqs.weight", factors, gguf.GGML_F32))  # where the converter's extra tensors go
    path = os.path.join(gguf.OUT, NAME + ".gguf")
    gguf.write_gguf(path, kv, tensors)
    gguf.check_round_trip(path, st, heads, LAYERS)
    _, back = gguf.read_gguf(path)
    assert np.array_equal(back["rope_freqs.weight"], factors)

    print(f"{NAME}: factors {factors.tolist()}, chain " + " ".join(f"{e['token']}({e['prob']:.4f})" for e in chain)
          + f"; vs unscaled: max |dp| {dp:.4f}, tokens {'same' if same_tokens else 'differ'}; "
          f"smallest top-1 gap {min(gaps):.4f}")


if __name__ == "__main__":
    main()
