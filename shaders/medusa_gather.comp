#version 450
#include "layouts/block_params.h"
#include "layouts/medusa_gather_map.h"
// Lays the heads' candidates into the verify block: node i (i >= 1) takes candidate
// map.candidate[i]; the root (block token 0, the token the last step emitted) is written by
// the CPU. Also reports each node's head probability for the step's trace.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Map { MedusaGatherMap map; };
layout(std430, binding = 1) readonly buffer CandidateTokens { uint cand_token[]; };
layout(std430, binding = 2) readonly buffer CandidateProbs { float cand_prob[]; };
layout(std430, binding = 3) buffer Params { BlockParams P; };
layout(std430, binding = 4) writeonly buffer Probs { DraftProbs out_probs; };

void main() {
    const uint n = min(P.count, map.nodes);
    for (uint i = gl_LocalInvocationID.x; i < n; i += 64) {
        const uint c = map.candidate[i];
        if (i > 0) P.tokens[i] = cand_token[c];
        out_probs.prob[i] = i == 0 ? 1.0 : cand_prob[c];
    }
}
