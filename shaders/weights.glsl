// How the matmul and embedding shaders read weights. Two families of variants:
//
// Word variants (F32, F16, BF16, Q8): a stream of 32-bit words, EPW elements per word, rows
// back to back; Q8 (llama2.c's int8 groups) takes one f32 scale per 2^group_shift elements from
// `scales` (a power of two no smaller than EPW, so a word never straddles two groups and the scale
// is found with a shift: CPU drivers pay dearly for per-element integer division).
//
// Block variants (the GGUF block types): each row holds, in 32-bit words,
//   [low plane: LOW_BITS per element, element order][high plane: HIGH_BITS per element, in byte
//   lanes over 4-bit low planes (see group_codes), else element order]
//   [meta: the f16 scales and packed sub-scales of each block, META_HALVES halves per block]
// padded to a multiple of 4 words (llm/block_repack.cpp writes it). The file's bits are only
// regrouped, so a row streams as many bytes as the file stores (plus at most 12 bytes).
// An element is a * f(code) + b, with (a, b) its sub-block's scale and offset and f the identity,
// a sign extension (Q8_0) or the IQ4 table.
// The TEXEL variants read the same words through uniform texel buffers (views of the weights
// buffer as R32, R32G32 and R32G32B32A32 uints, and of the scales as R32 floats, at bindings 5-8):
// CPU drivers fetch a texel for every lane with one vector gather, where a storage-buffer load
// at per-lane addresses is a loop over the lanes (lavapipe: 2.5x the bytes per second).
#if defined(VARIANT_TEXEL)
layout(binding = 5) uniform usamplerBuffer WeightTexels;
layout(binding = 6) uniform usamplerBuffer WeightTexels2;
layout(binding = 7) uniform usamplerBuffer WeightTexels4;
layout(binding = 8) uniform samplerBuffer ScaleTexels;
uint w1(uint i) { return texelFetch(WeightTexels, int(i)).x; }
uvec2 w2(uint i) { return texelFetch(WeightTexels2, int(i)).xy; }
uvec4 w4(uint i) { return texelFetch(WeightTexels4, int(i)); }
float scale_at(uint i) { return texelFetch(ScaleTexels, int(i)).x; }
#else
layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 0) readonly buffer Weights2 { uvec2 W2[]; };
layout(std430, binding = 0) readonly buffer Weights4 { uvec4 W4[]; };
layout(std430, binding = 1) readonly buffer Scales { float scales[]; };
uint w1(uint i) { return W[i]; }
uvec2 w2(uint i) { return W2[i]; }
uvec4 w4(uint i) { return W4[i]; }
float scale_at(uint i) { return scales[i]; }
#endif

#if defined(VARIANT_F32)
#define EPW 1
#elif defined(VARIANT_F16) || defined(VARIANT_BF16)
#define EPW 2
#elif defined(VARIANT_Q8)
#define EPW 4
#else
#define BLOCK_VARIANT
#define EPW 8  // elements per "word" of the loops: 8 consecutive values
#if defined(VARIANT_Q4_0) || defined(VARIANT_IQ4_NL) || defined(VARIANT_Q4_1)
#define BLOCK 32
#define LOW_BITS 4
#define HIGH_BITS 0
#elif defined(VARIANT_Q5_0) || defined(VARIANT_Q5_1)
#define BLOCK 32
#define LOW_BITS 4
#define HIGH_BITS 1
#elif defined(VARIANT_Q8_0)
#define BLOCK 32
#define LOW_BITS 8
#define HIGH_BITS 0
#elif defined(VARIANT_Q2_K)
#define BLOCK 256
#define LOW_BITS 2
#define HIGH_BITS 0
#elif defined(VARIANT_Q3_K)
#define BLOCK 256
#define LOW_BITS 2
#define HIGH_BITS 1
#elif defined(VARIANT_Q4_K) || defined(VARIANT_IQ4_XS)
#define BLOCK 256
#define LOW_BITS 4
#define HIGH_BITS 0
#elif defined(VARIANT_Q5_K)
#define BLOCK 256
#define LOW_BITS 4
#define HIGH_BITS 1
#elif defined(VARIANT_Q6_K)
#define BLOCK 256
#define LOW_BITS 4
#define HIGH_BITS 2
#else
#error "compile with a VARIANT_ define (see the variants line of the shader)"
#endif
#if defined(VARIANT_Q4_1) || defined(VARIANT_Q5_1)
#define META_HALVES 2  // d, m
#elif BLOCK == 32
#define META_HALVES 1  // d
#elif defined(VARIANT_IQ4_XS)
#define META_HALVES 4  // d, scales_h, scales_l[4]
#elif defined(VARIANT_Q2_K) || defined(VARIANT_Q6_K)
#define META_HALVES 10  // d, dmin (Q2_K) or 0 (Q6_K), 16 scale bytes
#else
#define META_HALVES 8  // d, dmin (Q3_K: 0), 12 packed scale bytes
#endif
// Q2_K, Q3_K and Q6_K scale every 16 values, the others every 32.
#if defined(VARIANT_Q2_K) || defined(VARIANT_Q3_K) || defined(VARIANT_Q6_K)
#define SUB 16
#else
#define SUB 32
#endif
#endif

#ifdef BLOCK_VARIANT

uint row_words(uint in_dim) {
    const uint w = in_dim * (LOW_BITS + HIGH_BITS) / 32u + (in_dim / BLOCK * META_HALVES + 1u) / 2u;
    return (w + 3u) & ~3u;
}

// Where row `row`'s planes start, in words.
struct RowBase {
    uint low, high, meta;
};
RowBase row_base(uint row, uint in_dim) {
    RowBase b;
    b.low = row * row_words(in_dim);
    b.high = b.low + in_dim * LOW_BITS / 32u;
    b.meta = b.high + in_dim * HIGH_BITS / 32u;
    return b;
}

uint byte_of(uint w, uint k) { return (w >> (8u * k)) & 0xFFu; }

#if BLOCK == 256
#define META_WORDS (META_HALVES / 2)
// A super-block's meta words (d/dmin or d, then the packed sub-scales), as few loads as its
// alignment allows.
void load_block_meta(uint mw, out uint m[5]) {
#if META_WORDS == 4
    const uvec4 v = w4(mw / 4u);
    m = uint[5](v.x, v.y, v.z, v.w, 0u);
#elif META_WORDS == 2
    const uvec2 v = w2(mw / 2u);
    m = uint[5](v.x, v.y, 0u, 0u, 0u);
#else
    m = uint[5](w1(mw), w1(mw + 1u), w1(mw + 2u), w1(mw + 3u), w1(mw + 4u));
#endif
}

// m[i] for a run-time i, by selects: CPU drivers turn a dynamic index into a private array into a
// per-lane memory access.
uint word_at(const uint m[5], uint i) { return i == 1u ? m[1] : i == 2u ? m[2] : i == 3u ? m[3] : i == 4u ? m[4] : m[0]; }

// (a, b) of sub-block j of a super-block with meta words m.
vec2 k_scale(const uint m[5], uint j) {
#if defined(VARIANT_Q4_K) || defined(VARIANT_Q5_K)
    const vec2 dm = unpackHalf2x16(m[0]);  // then 12 packed bytes: byte k of them is in word 1 + k/4
    uint sc, mn;
    if (j < 4u) {
        sc = byte_of(m[1], j) & 63u;
        mn = byte_of(m[2], j) & 63u;
    } else {
        sc = (byte_of(m[3], j - 4u) & 0xFu) | ((byte_of(m[1], j - 4u) >> 6) << 4);
        mn = (byte_of(m[3], j - 4u) >> 4) | ((byte_of(m[2], j - 4u) >> 6) << 4);
    }
    return vec2(dm.x * float(sc), -dm.y * float(mn));
#elif defined(VARIANT_Q3_K)
    const float d = unpackHalf2x16(m[0]).x;
    const uint low = j < 8u ? byte_of(word_at(m, 1u + j / 4u), j % 4u) & 0xFu : byte_of(word_at(m, 1u + (j - 8u) / 4u), j % 4u) >> 4;
    const uint high = (byte_of(m[3], j % 4u) >> (2u * (j / 4u))) & 3u;
    const float dl = d * float(int(low | (high << 4)) - 32);
    return vec2(dl, -4.0 * dl);
#elif defined(VARIANT_Q2_K)
    const vec2 dm = unpackHalf2x16(m[0]);
    const uint sc = byte_of(word_at(m, 1u + j / 4u), j % 4u);
    return vec2(dm.x * float(sc & 0xFu), -dm.y * float(sc >> 4));
#elif defined(VARIANT_Q6_K)
    const float dl = unpackHalf2x16(m[0]).x * float(bitfieldExtract(int(word_at(m, 1u + j / 4u)), int(8u * (j % 4u)), 8));
    return vec2(dl, -32.0 * dl);
#elif defined(VARIANT_IQ4_XS)
    const uint ls = ((m[1] >> (4u * j)) & 0xFu) | (((m[0] >> (16u + 2u * j)) & 3u) << 4);  // d | scales_h << 16
    return vec2(unpackHalf2x16(m[0]).x * float(int(ls) - 32), 0.0);
#endif
}

// The last super-block meta read per slot (a row, and SwiGLU's second row): in the CPU layout all
// lanes walk their rows in step, so a block's meta is loaded once for its eight quads.
uint cached_meta_at[2] = uint[2](0xFFFFFFFFu, 0xFFFFFFFFu);
uint cached_meta[2][5];
#endif

// (a, b) of the sub-block holding element e of a row whose meta starts at word `meta`; `slot`
// (0 or 1) names the meta cache to use.
vec2 sub_scale(uint meta, uint e, uint slot) {
#if BLOCK == 32
    const uint blk = e / 32u;
#if META_HALVES == 1
    const float d = unpackHalf2x16(w1(meta + blk / 2u) >> (16u * (blk & 1u))).x;
#if defined(VARIANT_Q4_0)
    return vec2(d, -8.0 * d);
#elif defined(VARIANT_Q5_0)
    return vec2(d, -16.0 * d);
#else
    return vec2(d, 0.0);
#endif
#else
    return unpackHalf2x16(w1(meta + blk));  // (d, m)
#endif
#else
    const uint mw = meta + (e / 256u) * META_WORDS;
    if (cached_meta_at[slot] != mw) {
        load_block_meta(mw, cached_meta[slot]);
        cached_meta_at[slot] = mw;
    }
    return k_scale(cached_meta[slot], (e % 256u) / SUB);
#endif
}

// The code's value before scaling.
float code_value(uint code) {
#if defined(VARIANT_IQ4_NL) || defined(VARIANT_IQ4_XS)
    // The 16 int8 table entries packed four to a word, picked without a memory lookup.
    const uvec4 table = uvec4(0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u);
    const uint w = code < 8u ? (code < 4u ? table.x : table.y) : (code < 12u ? table.z : table.w);
    return float(bitfieldExtract(int(w), int(8u * (code & 3u)), 8));
#elif defined(VARIANT_Q8_0)
    return float(int(code << 24) >> 24);
#else
    return float(code);
#endif
}

// The code of element k of 8 from their low plane bits `lo` (8*LOW_BITS bits, element order) and
// high plane bits `hi` (element order; Q3_K).
uint code_at(uint lo, uint hi, uint k) {
    uint c = (lo >> (LOW_BITS * k)) & ((1u << LOW_BITS) - 1u);
#if HIGH_BITS > 0
    c |= ((hi >> (HIGH_BITS * k)) & ((1u << HIGH_BITS) - 1u)) << LOW_BITS;
#endif
    return c;
}

#if LOW_BITS == 4 && HIGH_BITS > 0
// Q5_0, Q5_1, Q5_K, Q6_K: the high plane is laid out in byte lanes (block_repack.cpp), so the 5- or
// 6-bit codes of group g (elements 8g..8g+7 of a quad) are assembled four at a time: `even` holds
// those of elements 0, 2, 4, 6 in its bytes, `odd` those of 1, 3, 5, 7. h0, h1: the quad's high words.
#define BYTE_LANES
void group_codes(uint lo, uint h0, uint h1, uint g, out uint even, out uint odd) {
#if HIGH_BITS == 1
    const uint hb = (h0 >> (2u * g)) & 0x03030303u;  // per byte: bit 0 for the even element, bit 1 the odd
    even = (lo & 0x0F0F0F0Fu) | ((hb & 0x01010101u) << 4);
    odd = ((lo >> 4) & 0x0F0F0F0Fu) | ((hb & 0x02020202u) << 3);
#else
    const uint hb = ((g < 2u ? h0 : h1) >> (4u * (g % 2u))) & 0x0F0F0F0Fu;  // bits 0-1 even, 2-3 odd
    even = (lo & 0x0F0F0F0Fu) | ((hb & 0x03030303u) << 4);
    odd = ((lo >> 4) & 0x0F0F0F0Fu) | ((hb & 0x0C0C0C0Cu) << 2);
#endif
}
uint lane_code(uint even, uint odd, uint k) { return (((k & 1u) != 0u ? odd : even) >> (8u * (k / 2u))) & 0xFFu; }
#endif

// Elements [8*wi, 8*wi + 8) of a row as codes and their sub-block's (a, b): element k is
// a * c[k] + b (a word never straddles two sub-blocks), so a dot product scales once per word.
void weight_codes(uint row, uint wi, uint in_dim, uint group_shift, out float c[EPW], out vec2 ab) {
    const RowBase b = row_base(row, in_dim);
    const uint e0 = wi * 8u;
#if LOW_BITS == 4
    const uint lo = w1(b.low + wi);
#elif LOW_BITS == 2
    const uint lo = w1(b.low + wi / 2u) >> (16u * (wi & 1u));
#else
    const uvec2 lo8 = w2((b.low + 2u * wi) / 2u);
#endif
#if defined(BYTE_LANES)
#if HIGH_BITS == 1
    const uint h0 = w1(b.high + wi / 4u), h1 = 0u;
#else
    const uvec2 hh = w2((b.high + 2u * (wi / 4u)) / 2u);
    const uint h0 = hh.x, h1 = hh.y;
#endif
    uint even, odd;
    group_codes(lo, h0, h1, wi % 4u, even, odd);
#elif HIGH_BITS > 0
    const uint hi = w1(b.high + e0 / 32u) >> (e0 % 32u);  // Q3_K: one bit per element
#else
    const uint hi = 0u;
#endif
    ab = sub_scale(b.meta, e0, 0u);
    [[unroll]] for (uint k = 0; k < 8u; ++k) {
#if LOW_BITS == 8
        const uint code = (lo8[k / 4u] >> (8u * (k % 4u))) & 0xFFu;
#elif defined(BYTE_LANES)
        const uint code = lane_code(even, odd, k);
#else
        const uint code = code_at(lo, hi, k);
#endif
        c[k] = code_value(code);
    }
}

// Elements [8*wi, 8*wi + 8) of a row.
void weight_word(uint row, uint wi, uint in_dim, uint group_shift, out float v[EPW]) {
    float c[EPW];
    vec2 ab;
    weight_codes(row, wi, in_dim, group_shift, c, ab);
    [[unroll]] for (uint k = 0; k < 8u; ++k) v[k] = ab.x * c[k] + ab.y;
}

// Elements [32*q, 32*q + 32) of a row as 8 vec4s of codes, with one 16-byte load where the low
// plane allows, and the (a, b) of each half (16 elements): element = a * code + b. Scaling once per
// half of the dot product instead of once per element saves an operation per weight; the b terms
// take the sums of the inputs' halves. `slot` as in sub_scale.
void weight_quad(uint row, uint q, uint in_dim, uint group_shift, uint slot, out vec4 w[EPW], out vec4 ab) {
    const RowBase b = row_base(row, in_dim);
    const uint e0 = q * 32u;
#if LOW_BITS == 4
    const uvec4 lo4 = w4((b.low + 4u * q) / 4u);
    const uint lo[4] = uint[4](lo4.x, lo4.y, lo4.z, lo4.w);
#elif LOW_BITS == 2
    const uvec2 lo2 = w2((b.low + 2u * q) / 2u);
    const uint lo[4] = uint[4](lo2.x, lo2.x >> 16, lo2.y, lo2.y >> 16);
#else
    const uvec4 lo8a = w4((b.low + 8u * q) / 4u), lo8b = w4((b.low + 8u * q) / 4u + 1u);
    const uint lo8[8] = uint[8](lo8a.x, lo8a.y, lo8a.z, lo8a.w, lo8b.x, lo8b.y, lo8b.z, lo8b.w);
#endif
#if defined(BYTE_LANES) && HIGH_BITS == 1
    const uint h0 = w1(b.high + q), h1 = 0u;
#elif defined(BYTE_LANES)
    const uvec2 hh = w2((b.high + 2u * q) / 2u);
    const uint h0 = hh.x, h1 = hh.y;
#elif HIGH_BITS == 1
    const uint h = w1(b.high + q);  // Q3_K: element order
    const uint hi[4] = uint[4](h, h >> 8, h >> 16, h >> 24);
#else
    const uint hi[4] = uint[4](0u, 0u, 0u, 0u);
#endif
    const vec2 s0 = sub_scale(b.meta, e0, slot);
#if SUB == 16
    const vec2 s1 = sub_scale(b.meta, e0 + 16u, slot);
#else
    const vec2 s1 = s0;
#endif
    ab = vec4(s0, s1);
    [[unroll]] for (uint g = 0; g < 4u; ++g) {
#if defined(BYTE_LANES)
        uint even, odd;
        group_codes(lo[g], h0, h1, g, even, odd);
#endif
        [[unroll]] for (uint k = 0; k < 8u; ++k) {
#if LOW_BITS == 8
            const uint c = (lo8[2u * g + k / 4u] >> (8u * (k % 4u))) & 0xFFu;
#elif defined(BYTE_LANES)
            const uint c = lane_code(even, odd, k);
#else
            const uint c = code_at(lo[g], hi[g], k);
#endif
            w[2u * g + k / 4u][k % 4u] = code_value(c);
        }
    }
}

#else  // word variants

// `first` is the flat index of the word's first element, for the scale lookup.
void decode_word(uint w, uint first, uint group_shift, out float v[EPW]) {
#if defined(VARIANT_F32)
    v[0] = uintBitsToFloat(w);
#elif defined(VARIANT_F16)
    vec2 h = unpackHalf2x16(w);
    v[0] = h.x;
    v[1] = h.y;
#elif defined(VARIANT_BF16)
    v[0] = uintBitsToFloat(w << 16);
    v[1] = uintBitsToFloat(w & 0xFFFF0000u);
#elif defined(VARIANT_Q8)
    const float d = scale_at(first >> group_shift);
    for (uint k = 0; k < 4; ++k) v[k] = float(bitfieldExtract(int(w), int(8 * k), 8)) * d;
#endif
}

void weight_word(uint row, uint wi, uint in_dim, uint group_shift, out float v[EPW]) {
    decode_word(w1(row * (in_dim / EPW) + wi), row * in_dim + wi * EPW, group_shift, v);
}

// As the block variants' weight_codes: the values themselves, (a, b) = (1, 0).
void weight_codes(uint row, uint wi, uint in_dim, uint group_shift, out float c[EPW], out vec2 ab) {
    weight_word(row, wi, in_dim, group_shift, c);
    ab = vec2(1.0, 0.0);
}

// Words [4q, 4q + 4) of a row (4*EPW elements) as EPW vec4s of values, read with one 16-byte
// load; (a, b) = (1, 0) for both halves, as the block variants' weight_quad gives them.
void weight_quad(uint row, uint q, uint in_dim, uint group_shift, uint slot, out vec4 w[EPW], out vec4 ab) {
    ab = vec4(1.0, 0.0, 1.0, 0.0);
    const uvec4 ww = w4(row * (in_dim / EPW / 4u) + q);
    [[unroll]] for (uint j = 0; j < 4u; ++j) {
        float v[EPW];
        decode_word(ww[j], row * in_dim + (4u * q + j) * EPW, group_shift, v);
        [[unroll]] for (uint m = 0; m < EPW; ++m) {
            const uint e = j * EPW + m;  // element e of the quad is component e % 4 of vec4 e / 4
            w[e / 4u][e % 4u] = v[m];
        }
    }
}

#endif
