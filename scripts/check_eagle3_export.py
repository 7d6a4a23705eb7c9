#!/usr/bin/python3
"""Checks that an EAGLE-3 folder written by `medusa train-eagle --eagle3` is what SafeAILab's own
code reads: it loads the folder into SafeAILab's cnets.Model (as ea_model.py does), drafts the
top-1 chain after "Once upon a time" on stories260K, and compares it token for token (and each
level's probability) with the first drafted step of
`medusa generate --eagle DIR --eagle-topk 1 --eagle-depth 6 --temp 0 --trace`. That step drafts
from the prompt alone (its root is the prompt's last token, level 1 guesses the model's first
token): SafeAILab's topK_genrate is given the same, the features of positions 0..n-2 paired with
tokens 1..n-1.

Not part of the build or the tests (it needs Debian's python3-torch and a SafeAILab checkout):

    git clone https://github.com/SafeAILab/EAGLE /tmp/EAGLE
    /usr/bin/python3 scripts/check_eagle3_export.py --eagle-repo /tmp/EAGLE DIR

It reuses scripts/make_eagle3_fixture.py's torch forward of stories260K and its shims for
SafeAILab's imports.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_eagle3_fixture as fx  # noqa: E402


def medusa_chain(medusa, folder):
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.jsonl")
        subprocess.run([medusa, "generate", "-m", fx.MODEL, "--tokenizer", fx.TOKENIZER_MODEL, "--eagle", folder,
                        "--eagle-topk", "1", "--eagle-depth", str(fx.DEPTH), "--temp", "0", "-n", "8",
                        "--fixed-shape", "-p", fx.PROMPT, "--trace", trace], check=True, capture_output=True)
        with open(trace) as f:
            lines = f.read().splitlines()
    nodes = json.loads(lines[0])["nodes"]  # the first step: drafted from the prompt
    return nodes[0]["token"], [(n["token"], n["draft_prob"]) for n in nodes[1:]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eagle-repo", required=True, help="a checkout of github.com/SafeAILab/EAGLE")
    ap.add_argument("--medusa", default=os.path.join(fx.ROOT, "build", "medusa"))
    ap.add_argument("folder", help="an EAGLE-3 folder written by medusa train-eagle --eagle3")
    args = ap.parse_args()
    torch.set_num_threads(1)
    w = fx.load_llama2c(fx.MODEL)
    with open(os.path.join(args.folder, "config.json")) as f:
        config = json.load(f)
    layers = config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
    _, feats = fx.target_forward(w, fx.PROMPT_IDS, set(layers))
    hidden = torch.cat([feats[l] for l in layers], -1)[None, :-1]  # positions 0..n-2
    input_ids = torch.tensor([fx.PROMPT_IDS])
    cnets = fx.import_safeailab(args.eagle_repo)
    chain, _, _, fc_applied = fx.run_safeailab(cnets, args.folder, w["emb"], hidden, input_ids)
    root, ours = medusa_chain(args.medusa, args.folder)
    print(f"layers {layers}, fc applied by SafeAILab: {fc_applied}, root {root} (the prompt's last token {fx.PROMPT_IDS[-1]})")
    ok = root == fx.PROMPT_IDS[-1] and len(ours) == len(chain)
    for (tok, p), e in zip(ours, chain):
        same = tok == e["token"] and abs(p - e["prob"]) < 2e-4
        ok = ok and same
        print(f"  SafeAILab {e['token']:5d} p {e['prob']:.6f}   medusa {tok:5d} p {p:.6f}   {'same' if same else 'DIFFERS'}")
    print("SafeAILab's code drafts the same chain" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
