// What matmul_tiled.comp and matmul_coopmat.comp share: loading a chunk of a tile's weight rows
// (dequantized, scaled by the norm's gains) and of its input rows into shared memory, and the
// norm's sums of squares. The kernel defines BM, BN, BK, INVOCATIONS, p (MatmulPush), X/X4,
// G/G4, `norm`, `swiglu` and token_ss[BN], and how its shared memory is written:
//   put_weights4(rho, quad, x)  elements 4 quad .. 4 quad + 3 of tile row rho
//   put_weight(rho, e, v)       element e of tile row rho
//   put_inputs4(j, quad, x)     elements 4 quad .. 4 quad + 3 of the tile's input row j
//   put_partial(i, s), partial(i)  scratch for the sums of squares, BN * BK / 4 floats, used
//                               after the last chunk

// The matrix row of tile row `rho` (tiles start at output row o0), false past the last row.
bool tile_row(uint rho, uint o0, out uint row) {
    if (swiglu) {
        const uint o = o0 + rho % (BM / 2u);
        row = rho < BM / 2u ? o : o + p.out_dim;
        return o < p.out_dim;
    }
    row = o0 + rho;
    return row < p.out_dim;
}

// The chunk [k0, k0 + BK) of the tile's weight rows into shared memory, dequantized (and scaled
// by the norm's gains), zeros past the last row or input. Four words at a time where every row
// holds whole quads.
void load_weights(uint o0, uint k0) {
    const uint words_per_row = p.in_dim / EPW;
    if (words_per_row % 4u == 0u) {
        const uint quads = BK / (4u * EPW);  // of a chunk's row
        for (uint i = gl_LocalInvocationID.x; i < BM * quads; i += INVOCATIONS) {
            const uint rho = i / quads, q = i % quads, k = k0 + q * 4u * EPW;
            uint row;
            vec4 w[EPW], ab;
            const bool live = tile_row(rho, o0, row) && k < p.in_dim;
            if (live) weight_quad(row, k / (4u * EPW), p.in_dim, p.group_shift, 0u, w, ab);
            [[unroll]] for (uint v = 0; v < EPW; ++v) {
                const vec2 s = v < (EPW > 1 ? EPW / 2 : 1) ? ab.xy : ab.zw;  // the half's (a, b)
                vec4 x = live ? s.x * w[v] + s.y : vec4(0.0);
                if (norm && live) x *= G4[k / 4u + v];
                put_weights4(rho, q * EPW + v, x);
            }
        }
        return;
    }
    const uint words = BK / EPW;  // of a chunk's row
    for (uint i = gl_LocalInvocationID.x; i < BM * words; i += INVOCATIONS) {
        const uint rho = i / words, wi = i % words, k = k0 + wi * EPW;
        uint row;
        float v[EPW];
        const bool live = tile_row(rho, o0, row) && k < p.in_dim;
        if (live) weight_word(row, k / EPW, p.in_dim, p.group_shift, v);
        [[unroll]] for (uint m = 0; m < EPW; ++m) {
            const uint e = wi * EPW + m;
            put_weight(rho, e, live ? (norm ? v[m] * G[k + m] : v[m]) : 0.0);
        }
    }
}

// An invocation's loads of a chunk's inputs: the same tile rows and quads every chunk (at most 8:
// llm/matmul_tiles.cpp checks every tile), and its sums of squares of what each load brought.
#define MAX_INPUT_LOADS 8u
float input_ss[MAX_INPUT_LOADS] = float[MAX_INPUT_LOADS](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);

// The chunk [k0, k0 + BK) of the tile's input rows into shared memory, zeros past the last token
// or input; with the norm, each load's sum of squares kept for sums_of_squares.
void load_inputs(uint t0, uint k0, bool fours) {
    [[unroll]] for (uint n = 0; n < MAX_INPUT_LOADS; ++n) {
        const uint i = gl_LocalInvocationID.x + n * INVOCATIONS;
        if (i >= BN * (BK / 4u)) break;
        const uint j = i / (BK / 4u), k = k0 + 4u * (i % (BK / 4u)), t = t0 + j;
        vec4 x = vec4(0.0);
        if (t < p.n_tokens) {
            const uint base = t * p.x_stride + k;
            if (fours) {
                if (k < p.in_dim) x = X4[base / 4u];
            } else {
                [[unroll]] for (uint c = 0; c < 4u; ++c)
                    if (k + c < p.in_dim) x[c] = X[base + c];
            }
        }
        if (norm) input_ss[n] += dot(x, x);
        put_inputs4(j, i % (BK / 4u), x);
    }
}

// The norm's sum of squares of each of the tile's input rows into token_ss, from the inputs the
// chunks loaded (once, not in a pass of its own): after the last chunk, whose barrier frees the
// scratch. Each load's sum goes to scratch at its index, and a token's loads are BK / 4 in a row.
void sums_of_squares() {
    [[unroll]] for (uint n = 0; n < MAX_INPUT_LOADS; ++n) {
        const uint i = gl_LocalInvocationID.x + n * INVOCATIONS;
        if (i >= BN * (BK / 4u)) break;
        put_partial(i, input_ss[n]);
    }
    barrier();
    if (gl_LocalInvocationID.x < BN) {
        float s = 0.0;
        for (uint q = 0; q < BK / 4u; ++q) s += partial(gl_LocalInvocationID.x * (BK / 4u) + q);
        token_ss[gl_LocalInvocationID.x] = s;
    }
    barrier();  // before the epilogue reads token_ss (or the sums' tile overwrites the scratch)
}
