#include "llm/block_repack.h"

#include <cstring>
#include <stdexcept>

#include "model/block_format.h"

namespace medusa {

namespace {

// A block's meta, as byte ranges of the file's block copied in order ({-1, 2}: two zero bytes).
struct MetaPiece {
    int offset, bytes;
};

struct TypeRepack {
    BlockLayout layout;
    std::vector<MetaPiece> meta;
};

// Meta orders match sub_scale() in shaders/weights.glsl.
const std::vector<std::pair<DType, TypeRepack>>& repacks() {
    static const std::vector<std::pair<DType, TypeRepack>> r = {
        {DType::Q4_0, {{MatrixVariant::Q4_0, 32, 4, 0, 1}, {{0, 2}}}},
        {DType::Q4_1, {{MatrixVariant::Q4_1, 32, 4, 0, 2}, {{0, 4}}}},
        {DType::Q5_0, {{MatrixVariant::Q5_0, 32, 4, 1, 1}, {{0, 2}}}},
        {DType::Q5_1, {{MatrixVariant::Q5_1, 32, 4, 1, 2}, {{0, 4}}}},
        {DType::Q8_0, {{MatrixVariant::Q8_0, 32, 8, 0, 1}, {{0, 2}}}},
        {DType::IQ4_NL, {{MatrixVariant::IQ4_NL, 32, 4, 0, 1}, {{0, 2}}}},
        {DType::Q2_K, {{MatrixVariant::Q2_K, 256, 2, 0, 10}, {{80, 4}, {0, 16}}}},             // d, dmin, scales[16]
        {DType::Q3_K, {{MatrixVariant::Q3_K, 256, 2, 1, 8}, {{108, 2}, {-1, 2}, {96, 12}}}},  // d, 0, scales[12]
        {DType::Q4_K, {{MatrixVariant::Q4_K, 256, 4, 0, 8}, {{0, 16}}}},                      // d, dmin, scales[12]
        {DType::Q5_K, {{MatrixVariant::Q5_K, 256, 4, 1, 8}, {{0, 16}}}},
        {DType::Q6_K, {{MatrixVariant::Q6_K, 256, 4, 2, 10}, {{208, 2}, {-1, 2}, {192, 16}}}},  // d, 0, scales[16]
        {DType::IQ4_XS, {{MatrixVariant::IQ4_XS, 256, 4, 0, 4}, {{0, 8}}}},                     // d, scales_h, scales_l[4]
    };
    return r;
}

const TypeRepack* repack_of(DType t) {
    for (const auto& [type, r] : repacks())
        if (type == t) return &r;
    return nullptr;
}

// The integer code (before scale and offset) of each value of one block, in element order.
void block_codes(DType type, const uint8_t* b, uint8_t* codes) {
    auto nibbles = [&](const uint8_t* qs) {  // 32 values: low nibbles first, then high nibbles
        for (int j = 0; j < 16; ++j) codes[j] = qs[j] & 15, codes[j + 16] = qs[j] >> 4;
    };
    auto fifth_bits = [&](const uint8_t* qh_bytes) {  // bit e of qh is value e's bit 4
        uint32_t qh;
        std::memcpy(&qh, qh_bytes, 4);
        for (int e = 0; e < 32; ++e) codes[e] |= uint8_t(((qh >> e) & 1) << 4);
    };
    switch (type) {
        case DType::Q4_0:
        case DType::IQ4_NL: return nibbles(b + 2);
        case DType::Q4_1: return nibbles(b + 4);
        case DType::Q5_0: nibbles(b + 6); return fifth_bits(b + 2);
        case DType::Q5_1: nibbles(b + 8); return fifth_bits(b + 4);
        case DType::Q8_0: std::memcpy(codes, b + 2, 32); return;
        case DType::Q2_K:
        case DType::Q3_K: {
            // Value 128n + 32s + 16h + l: bits 2s of byte 32n + 16h + l of qs; Q3_K's third bit is
            // bit 4n + s of hmask byte 16h + l.
            const uint8_t* qs = b + (type == DType::Q2_K ? 16 : 32);
            for (int e = 0; e < 256; ++e) {
                const int n = e / 128, s = (e / 32) % 4, i = e % 32;
                codes[e] = (qs[32 * n + i] >> (2 * s)) & 3;
                if (type == DType::Q3_K) codes[e] |= uint8_t(((b[i] >> (4 * n + s)) & 1) << 2);
            }
            return;
        }
        case DType::Q4_K:
        case DType::Q5_K: {
            // Value 64p + 32h + l: nibble h of qs byte 32p + l; Q5_K's fifth bit is bit 2p + h of qh byte l.
            const uint8_t* qs = b + (type == DType::Q4_K ? 16 : 48);
            for (int e = 0; e < 256; ++e) {
                const int p = e / 64, h = (e / 32) % 2, l = e % 32;
                codes[e] = (qs[32 * p + l] >> (4 * h)) & 15;
                if (type == DType::Q5_K) codes[e] |= uint8_t(((b[16 + l] >> (2 * p + h)) & 1) << 4);
            }
            return;
        }
        case DType::Q6_K: {
            // Value 128n + 32k + l: nibble k/2 of ql byte 64n + 32(k%2) + l, and bits 2k of qh byte 32n + l.
            for (int e = 0; e < 256; ++e) {
                const int n = e / 128, k = (e / 32) % 4, l = e % 32;
                const int low = (b[64 * n + 32 * (k % 2) + l] >> (4 * (k / 2))) & 15;
                const int high = (b[128 + 32 * n + l] >> (2 * k)) & 3;
                codes[e] = uint8_t(low | (high << 4));
            }
            return;
        }
        case DType::IQ4_XS:
            for (int ib = 0; ib < 8; ++ib) {
                const uint8_t* qs = b + 8 + 16 * ib;
                for (int j = 0; j < 16; ++j) codes[32 * ib + j] = qs[j] & 15, codes[32 * ib + 16 + j] = qs[j] >> 4;
            }
            return;
        default: throw std::invalid_argument(std::string(dtype_name(type)) + " has no block layout");
    }
}

// Sets `bits` bits of element e of a plane of `bits`-bit fields.
void put_bits(uint32_t* plane, int64_t e, int bits, uint32_t v) {
    const int per_word = 32 / bits;
    plane[e / per_word] |= v << (bits * (e % per_word));
}

// The high bits of element e over a 4-bit low plane, in byte lanes (group_codes in weights.glsl):
// per 32-value quad and 8-value group g, element k's bits sit in byte k/2 of the quad's high word(s),
// next to those of its even/odd neighbour, so four codes are assembled with a few word operations.
void put_high_lane_bits(uint32_t* plane, int64_t e, int high_bits, uint32_t v) {
    const int64_t quad = e / 32;
    const int g = int(e % 32) / 8, k = int(e % 8);
    if (high_bits == 1) plane[quad] |= v << (8 * (k / 2) + 2 * g + (k & 1));
    else plane[2 * quad + g / 2] |= v << (8 * (k / 2) + 4 * (g % 2) + 2 * (k & 1));
}

}  // namespace

const BlockLayout* block_layout(DType type) {
    const TypeRepack* r = repack_of(type);
    return r ? &r->layout : nullptr;
}

size_t block_row_words(const BlockLayout& l, int64_t cols) {
    const size_t w = size_t(cols) * size_t(l.low_bits + l.high_bits) / 32 + (size_t(cols / l.block) * l.meta_halves + 1) / 2;
    return (w + 3) / 4 * 4;
}

void repack_block_rows(const Tensor& t, std::vector<uint32_t>& out) {
    const TypeRepack* r = repack_of(t.type);
    const BlockFormat* f = gguf_format(t.type);
    if (!r || !f || t.shape.size() != 2 || t.shape[1] % r->layout.block)
        throw std::invalid_argument("tensor " + t.name + " cannot be repacked as " + dtype_name(t.type) + " rows");
    const BlockLayout& l = r->layout;
    const int64_t rows = t.shape[0], cols = t.shape[1], blocks_per_row = cols / l.block;
    const size_t row_words = block_row_words(l, cols);
    if (t.nbytes < size_t(rows * blocks_per_row * f->bytes))
        throw std::invalid_argument("tensor " + t.name + " holds too few bytes for its shape");
    const size_t start = out.size();
    out.resize(start + size_t(rows) * row_words, 0u);
    std::vector<uint8_t> codes(size_t(l.block));
    std::vector<uint8_t> meta;
    for (int64_t row = 0; row < rows; ++row) {
        uint32_t* low = &out[start + size_t(row) * row_words];
        uint32_t* high = low + cols * l.low_bits / 32;
        meta.clear();
        for (int64_t b = 0; b < blocks_per_row; ++b) {
            const uint8_t* blk = t.data + (row * blocks_per_row + b) * f->bytes;
            block_codes(t.type, blk, codes.data());
            for (int i = 0; i < l.block; ++i) {
                const int64_t e = b * l.block + i;
                put_bits(low, e, l.low_bits, codes[i] & ((1u << l.low_bits) - 1));
                const uint32_t hb = uint32_t(codes[i]) >> l.low_bits;
                if (l.high_bits && l.low_bits == 4) put_high_lane_bits(high, e, l.high_bits, hb);
                else if (l.high_bits) put_bits(high, e, l.high_bits, hb);
            }
            for (const MetaPiece& p : r->meta)
                for (int i = 0; i < p.bytes; ++i) meta.push_back(p.offset < 0 ? 0 : blk[p.offset + i]);
        }
        std::memcpy(high + cols * l.high_bits / 32, meta.data(), meta.size());
    }
}

}  // namespace medusa
