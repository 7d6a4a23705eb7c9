// Rows of logits read by one subgroup each (argmax.comp, node_stats.comp): logits_at(row, i) is
// the row's i-th load of PER_LOAD logits. The TEXEL variant (a vocabulary that is a multiple of 4)
// reads RGBA32F texels at binding 2: a CPU driver such as lavapipe gathers them, where storage
// loads at addresses derived from the workgroup are a loop over the lanes. Needs `L` (the logits
// as floats) and `p.vocab` declared before it.
#if defined(VARIANT_TEXEL)
layout(binding = 2) uniform samplerBuffer LogitTexels;
const uint PER_LOAD = 4;
vec4 logits_at(uint row, uint i) { return texelFetch(LogitTexels, int(row * (p.vocab / 4u) + i)); }
#else
const uint PER_LOAD = 1;
vec4 logits_at(uint row, uint i) { return vec4(L[row * p.vocab + i]); }
#endif
