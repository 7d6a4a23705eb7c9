// Weights are read one 32-bit word at a time. Each variant says how many elements a word
// holds (EPW) and how to expand them; quantized variants take one scale per 2^group_shift
// elements (a power of two no smaller than EPW, so a word never straddles two groups and the
// scale is found with a shift: CPU drivers pay dearly for per-element integer division).
#if defined(VARIANT_F32)
#define EPW 1
#elif defined(VARIANT_F16)
#define EPW 2
#elif defined(VARIANT_Q8)
#define EPW 4
#elif defined(VARIANT_Q4)
#define EPW 8
#else
#error "compile with one of VARIANT_F32, VARIANT_F16, VARIANT_Q8, VARIANT_Q4"
#endif

// `first` is the flat index of the word's first element, for the scale lookup.
void decode_word(uint w, uint first, uint group_shift, out float v[EPW]) {
#if defined(VARIANT_F32)
    v[0] = uintBitsToFloat(w);
#elif defined(VARIANT_F16)
    vec2 h = unpackHalf2x16(w);
    v[0] = h.x;
    v[1] = h.y;
#elif defined(VARIANT_Q8)
    const float d = scales[first >> group_shift];
    for (uint k = 0; k < 4; ++k) v[k] = float(bitfieldExtract(int(w), int(8 * k), 8)) * d;
#elif defined(VARIANT_Q4)
    const float d = scales[first >> group_shift];
    for (uint k = 0; k < 8; ++k) v[k] = float(int((w >> (4 * k)) & 15u) - 8) * d;
#endif
}
