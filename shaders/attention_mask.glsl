// Which cached slots and block tokens a block token attends to (layouts/block_params.h), for the
// attention shaders. Expects the block's params as `P`; a shader that reads the mask rows as
// texels defines ATTENTION_TEXEL_MASKS and its own mask_row and window_row.
#if BLOCK_MASK_WORDS != 4
#error "mask rows are read as one uvec4"
#endif

#ifndef ATTENTION_TEXEL_MASKS
uvec4 mask_row(uint t) {
    const uint i = t * BLOCK_MASK_WORDS;
    return uvec4(P.mask[i], P.mask[i + 1], P.mask[i + 2], P.mask[i + 3]);
}
uvec4 window_row(uint t) {
    const uint i = t * BLOCK_MASK_WORDS;
    return uvec4(P.window_mask[i], P.window_mask[i + 1], P.window_mask[i + 2], P.window_mask[i + 3]);
}
#endif

// Bit i of a mask row (BLOCK_MASK_WORDS = 4 words).
bool row_bit(uvec4 row, uint i) {
    const uint word = i < 64u ? (i < 32u ? row.x : row.y) : (i < 96u ? row.z : row.w);
    return (word & (1u << (i & 31u))) != 0;
}

// Slots before `free_end` (= base - window) are seen by every block token; the window's slots and
// the block's own tokens as the token's mask rows (read once, before any loop) say.
bool visible(uint s, uint base, uint free_end, uvec4 window_bits, uvec4 block_bits) {
    if (s < free_end) return true;
    return s < base ? row_bit(window_bits, s - free_end) : row_bit(block_bits, s - base);
}
