// RoPE for the pair of dimensions that starts at index i of a head (llama2.c's adjacent pairs,
// i even): rope_frequency is theta^-(i / rotated), divided by the pair's factor (Llama 3's
// rope_freqs or LongRoPE's, 1.0 where the model has none); rope_cos_sin is the pair's rotation at
// position `pos` (already divided by any linear scaling) times LongRoPE's attention factor. Only
// the first `rotated` dimensions of a head rotate (partial RoPE); the rest pass through.
// rope_kv.comp, head_rope_kv.comp, the qkv matmul's fused RoPE and train_rope.comp share them.
float rope_frequency(uint i, uint rotated, float theta, float factor) {
    return 1.0 / pow(theta, float(i) / float(rotated)) / factor;
}

vec2 rope_cos_sin(uint i, uint rotated, float theta, float factor, float pos, float attn_factor) {
    const float a = pos * rope_frequency(i, rotated, theta, factor);
    return vec2(cos(a), sin(a)) * attn_factor;
}
