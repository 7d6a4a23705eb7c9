#include "model/gguf_vocab.h"

#include <cstring>

namespace medusa {

namespace {

// Protocol-buffer wire format, just the parts a ModelProto needs.
void varint(std::string& out, uint64_t v) {
    while (v >= 0x80) out += char((v & 0x7f) | 0x80), v >>= 7;
    out += char(v);
}
void tag(std::string& out, int field, int wire) { varint(out, uint64_t(field) << 3 | uint64_t(wire)); }
void field_varint(std::string& out, int field, int64_t v) {
    tag(out, field, 0);
    varint(out, uint64_t(v));  // negative ints take ten bytes, as protobuf writes them
}
void field_bytes(std::string& out, int field, const std::string& bytes) {
    tag(out, field, 2);
    varint(out, bytes.size());
    out += bytes;
}
void field_float(std::string& out, int field, float f) {
    tag(out, field, 5);
    char b[4];
    std::memcpy(b, &f, 4);
    out.append(b, 4);
}

}  // namespace

std::string sentencepiece_proto_from_vocab(const GgufVocab& v) {
    std::string model;
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        std::string piece;
        field_bytes(piece, 1, v.tokens[i]);                          // piece
        field_float(piece, 2, i < v.scores.size() ? v.scores[i] : 0);  // score
        const int type = i < v.types.size() && v.types[i] >= 1 && v.types[i] <= 6 ? v.types[i] : 1;
        field_varint(piece, 3, type);                                 // type
        field_bytes(model, 1, piece);                                 // ModelProto.pieces
    }
    std::string trainer;
    field_varint(trainer, 3, 2);  // model_type = BPE
    field_varint(trainer, 4, int64_t(v.tokens.size()));
    bool has_bytes = false;
    for (int32_t t : v.types) has_bytes = has_bytes || t == 6;
    field_varint(trainer, 35, has_bytes ? 1 : 0);  // byte_fallback
    field_varint(trainer, 40, v.unk);
    field_varint(trainer, 41, v.bos);
    field_varint(trainer, 42, v.eos);
    field_varint(trainer, 43, -1);  // pad_id
    field_bytes(model, 2, trainer);
    std::string normalizer;
    field_bytes(normalizer, 1, "identity");
    field_varint(normalizer, 3, 1);  // add_dummy_prefix
    field_varint(normalizer, 4, 0);  // remove_extra_whitespaces
    field_varint(normalizer, 5, 1);  // escape_whitespaces
    field_bytes(model, 3, normalizer);
    return model;
}

}  // namespace medusa
