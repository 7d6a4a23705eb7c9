// What matmul_tiled.comp and matmul_coopmat.comp share: loading a chunk of a tile's weight rows
// (dequantized, scaled by the norm's gains) and of its input rows into shared memory, and the
// norm's sums of squares. The kernel defines BM, BN, BK, INVOCATIONS, p (MatmulPush), X/X4,
// G/G4, `norm`, `swiglu` and token_ss[BN], and how its shared memory is written:
//   put_weights4(rho, quad, x)  elements 4 quad .. 4 quad + 3 of tile row rho
//   put_weight(rho, e, v)       element e of tile row rho
//   put_inputs4(j, quad, x)     elements 4 quad .. 4 quad + 3 of the tile's input row j
//   put_partial(i, s), partial(i)  scratch for the sums of squares, BN * max(1, INVOCATIONS / BN)
//                               floats

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

// The chunk [k0, k0 + BK) of the tile's input rows into shared memory, zeros past the last token
// or input.
void load_inputs(uint t0, uint k0, bool fours) {
    for (uint i = gl_LocalInvocationID.x; i < BN * (BK / 4u); i += INVOCATIONS) {
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
        put_inputs4(j, i % (BK / 4u), x);
    }
}

// The norm's sum of squares of each of the tile's input rows into token_ss: the invocations split
// into groups of `parts` per row, their partial sums meeting in scratch shared memory.
void sums_of_squares(uint t0, bool fours) {
    const uint parts = max(1u, INVOCATIONS / BN);
    for (uint i = gl_LocalInvocationID.x; i < BN * parts; i += INVOCATIONS) {
        const uint j = i / parts, part = i % parts, t = t0 + j;
        float s = 0.0;
        if (t < p.n_tokens) {
            if (fours) {
                for (uint k = 4u * part; k < p.in_dim; k += 4u * parts) {
                    const vec4 x = X4[(t * p.x_stride + k) / 4u];
                    s += dot(x, x);
                }
            } else {
                for (uint k = part; k < p.in_dim; k += parts) s += X[t * p.x_stride + k] * X[t * p.x_stride + k];
            }
        }
        put_partial(i, s);
    }
    barrier();
    if (gl_LocalInvocationID.x < BN) {
        float s = 0.0;
        for (uint q = 0; q < parts; ++q) {
            const uint i = gl_LocalInvocationID.x * parts + q;
            s += partial(i);
        }
        token_ss[gl_LocalInvocationID.x] = s;
    }
    barrier();  // before the tiles overwrite the partial sums
}
