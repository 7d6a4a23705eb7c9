// RoPE's frequency for the pair that starts at index i of a q or k row (llama2.c's adjacent
// pairs): theta^-((i mod head_dim) / head_dim), divided by Llama 3's factor for that pair (1.0
// where the model has none). rope_kv.comp, the qkv matmul's fused RoPE and train_rope.comp share it.
float rope_frequency(uint i, uint head_dim, float theta, float factor) {
    return 1.0 / pow(theta, float(i % head_dim) / float(head_dim)) / factor;
}
