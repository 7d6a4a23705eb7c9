#include "model/gguf_vocab.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "model/gguf_metadata.h"
#include "model/format_error.h"
#include "model/pretokenizer.h"
#include "model/special_tokens.h"

namespace medusa {

namespace {

// Protocol-buffer wire format, just the parts a ModelProto needs (sentencepiece_model.proto).
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

enum PieceType { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };

void validate(const GgufVocab& v, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": embedded vocabulary: " + what); };
    const size_t n = v.tokens.size();
    if (n == 0 || n > (1u << 22)) bad(std::to_string(n) + " tokens");
    if (!v.scores.empty() && v.scores.size() != n)
        bad(std::to_string(v.scores.size()) + " scores for " + std::to_string(n) + " tokens");
    if (!v.types.empty() && v.types.size() != n)
        bad(std::to_string(v.types.size()) + " token types for " + std::to_string(n) + " tokens");
    for (int id : {v.bos, v.eos, v.unk})
        if (id < 0 || size_t(id) >= n) bad("special token id " + std::to_string(id) + " is out of range");
    if (v.bos == v.unk || v.eos == v.unk) bad("the unknown token is also the BOS or EOS token");
    std::unordered_set<std::string> seen;
    int unknown = 0;
    for (size_t i = 0; i < n; ++i) {
        if (v.tokens[i].empty()) bad("token " + std::to_string(i) + " is empty");
        if (!seen.insert(v.tokens[i]).second) bad("token " + std::to_string(i) + " repeats an earlier piece");
        const int t = v.types.empty() ? NORMAL : v.types[i];
        if (t < 0 || t > BYTE) bad("token " + std::to_string(i) + " has type " + std::to_string(t));
        if (t == UNKNOWN) ++unknown;
        if (t == BYTE) {  // sentencepiece requires byte pieces to read <0xXX>
            const std::string& p = v.tokens[i];
            if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>' || !std::isxdigit((unsigned char)p[3]) ||
                !std::isxdigit((unsigned char)p[4]))
                bad("byte token " + std::to_string(i) + " is not of the form <0xXX>");
        }
    }
    if (unknown != 1 || (!v.types.empty() && v.types[size_t(v.unk)] != UNKNOWN))
        bad("needs exactly one unknown-token piece, at the unknown token id " + std::to_string(v.unk));
}

}  // namespace

std::string sentencepiece_proto_from_vocab(const GgufVocab& v, const std::string& name) {
    GgufVocab fixed = v;
    if (v.types.empty()) fixed.types.assign(v.tokens.size(), NORMAL);
    // sentencepiece wants exactly one unknown piece, the unknown id's. Phi-3's file types <unk> as
    // control and its padding pieces as unknown: llama.cpp reads those as the unknown piece and
    // pieces never produced, which is what this makes of them.
    if (v.unk >= 0 && size_t(v.unk) < fixed.types.size()) {
        for (int32_t& t : fixed.types)
            if (t == UNKNOWN) t = UNUSED;
        fixed.types[size_t(v.unk)] = UNKNOWN;
    }
    validate(fixed, name);
    // sentencepiece only reports BOS/EOS ids for control pieces; llama.cpp treats them as special anyway.
    fixed.types[size_t(v.bos)] = CONTROL;
    fixed.types[size_t(v.eos)] = CONTROL;
    std::string model;
    bool has_bytes = false;
    for (size_t i = 0; i < fixed.tokens.size(); ++i) {
        std::string piece;
        const int type = fixed.types[i] == 0 ? NORMAL : fixed.types[i];
        has_bytes = has_bytes || type == BYTE;
        field_bytes(piece, 1, fixed.tokens[i]);                                // SentencePiece.piece
        field_float(piece, 2, fixed.scores.empty() ? 0.0f : fixed.scores[i]);  // SentencePiece.score
        field_varint(piece, 3, type);                                          // SentencePiece.type
        field_bytes(model, 1, piece);                                          // ModelProto.pieces
    }
    std::string trainer;
    field_varint(trainer, 3, 2);  // model_type = BPE
    field_varint(trainer, 4, int64_t(fixed.tokens.size()));
    field_varint(trainer, 35, has_bytes ? 1 : 0);  // byte_fallback
    field_varint(trainer, 40, fixed.unk);
    field_varint(trainer, 41, fixed.bos);
    field_varint(trainer, 42, fixed.eos);
    field_varint(trainer, 43, -1);  // pad_id: none
    // sentencepiece finds bos/eos/unk by these piece texts, not by the ids above.
    field_bytes(trainer, 45, fixed.tokens[size_t(fixed.unk)]);
    field_bytes(trainer, 46, fixed.tokens[size_t(fixed.bos)]);
    field_bytes(trainer, 47, fixed.tokens[size_t(fixed.eos)]);
    field_bytes(model, 2, trainer);
    std::string normalizer;  // what llama.cpp does for a "llama" vocabulary
    field_bytes(normalizer, 1, "identity");
    field_varint(normalizer, 3, v.add_space_prefix ? 1 : 0);  // add_dummy_prefix
    field_varint(normalizer, 4, 0);  // remove_extra_whitespaces
    field_varint(normalizer, 5, 1);  // escape_whitespaces
    field_bytes(model, 3, normalizer);
    return model;
}

EmbeddedVocab embed_sentencepiece_vocab(GgufVocab v, const std::string& name) {
    // llama.cpp retypes some tokens by their text when it loads them (llama_cpp_token_types). What
    // matters here is which tokens it cuts out of text: a user-defined token it makes control
    // (Gemma 3's "</s>") is text unless special tokens are parsed, and so on. A normal piece it
    // makes control stays normal: sentencepiece would no longer merge pieces into it.
    if (v.types.empty() || v.types.size() == v.tokens.size()) {
        if (v.types.empty()) v.types.assign(v.tokens.size(), NORMAL);
        const std::vector<int32_t> llama = llama_cpp_token_types(v.tokens, v.types);
        for (size_t i = 0; i < v.types.size(); ++i)
            if (llama[i] != v.types[i] && (v.types[i] == USER_DEFINED || llama[i] == USER_DEFINED || llama[i] == NORMAL))
                v.types[i] = llama[i];
    }
    EmbeddedVocab e;
    e.sentencepiece = sentencepiece_proto_from_vocab(v, name);
    for (size_t i = 0; i < v.types.size(); ++i)  // the proto has one unknown piece: the others are unused there
        if (v.types[i] == UNKNOWN && int(i) != v.unk) e.unknown.push_back(int32_t(i));
    return e;
}

namespace {

EmbeddedVocab sentencepiece_vocab(const GgufMetadata& meta, const std::string& name) {
    GgufVocab v;
    v.tokens = meta.array("tokenizer.ggml.tokens", STRING)->texts;
    if (const GgufValue* s = meta.array("tokenizer.ggml.scores", F32))
        for (double x : s->numbers) v.scores.push_back(std::isfinite(x) && std::fabs(x) < 1e30 ? float(x) : 0.0f);
    if (const GgufValue* t = meta.array("tokenizer.ggml.token_type", I32))
        for (double x : t->numbers) v.types.push_back(x >= -1 && x <= 1000 ? int32_t(x) : -1);
    v.bos = meta.integer("tokenizer.ggml.bos_token_id", 1, false);
    v.eos = meta.integer("tokenizer.ggml.eos_token_id", 2, false);
    v.unk = meta.integer("tokenizer.ggml.unknown_token_id", 0, false);
    v.add_space_prefix = meta.boolean("tokenizer.ggml.add_space_prefix", true);
    std::vector<int32_t> rstrip = llama_cpp_rstrip_tokens(meta.text("general.name"), v.tokens, v.types);  // Phi-3's
    EmbeddedVocab out = embed_sentencepiece_vocab(std::move(v), name);
    out.rstrip = std::move(rstrip);
    return out;
}

std::shared_ptr<const BpeVocab> byte_level_vocab(const GgufMetadata& meta, const std::string& name,
                                                 std::vector<int32_t>& rstrip) {
    auto v = std::make_shared<BpeVocab>();
    v->tokens = meta.array("tokenizer.ggml.tokens", STRING)->texts;
    if (const GgufValue* t = meta.array("tokenizer.ggml.token_type", I32))
        for (double x : t->numbers) v->types.push_back(x >= 0 && x <= double(kTokenByte) ? int32_t(x) : -1);
    const GgufValue* merges = meta.array("tokenizer.ggml.merges", STRING);
    if (!merges) throw FormatError(name + ": the gpt2 (BPE) vocabulary has no tokenizer.ggml.merges");
    v->merges = merges->texts;
    v->pre = meta.text("tokenizer.ggml.pre");
    v->regexes = gguf_pre_tokenizer_regexes(v->pre, v->ignore_merges, name);
    v->bos = meta.integer("tokenizer.ggml.bos_token_id", -1, false);
    v->eos = meta.integer("tokenizer.ggml.eos_token_id", -1, false);
    // llama.cpp: Llama 3's pre-tokenizer implies BOS; the file's add_bos_token decides when present.
    v->add_bos = meta.boolean("tokenizer.ggml.add_bos_token", v->ignore_merges) && v->bos >= 0;
    validate_bpe_vocab(*v, name);
    rstrip = llama_cpp_rstrip_tokens(meta.text("general.name"), v->tokens, v->types);  // Phi-3's
    return v;
}

}  // namespace

EmbeddedVocab read_gguf_vocab(const GgufMetadata& meta, const std::string& name) {
    if (!meta.array("tokenizer.ggml.tokens", STRING)) throw FormatError(name + ": holds no vocabulary (tokenizer.ggml.tokens)");
    const std::string model = meta.text("tokenizer.ggml.model");
    EmbeddedVocab e;
    if (model == "llama") e = sentencepiece_vocab(meta, name);
    else if (model == "gpt2") e.bpe = byte_level_vocab(meta, name, e.rstrip);
    else
        throw FormatError(name + ": tokenizer '" + model +
                          "' is not supported (llama (sentencepiece) and gpt2 (byte-level BPE) are)");
    return e;
}

EmbeddedVocab load_gguf_vocab(const std::vector<uint8_t>& bytes, const std::string& name) {
    return read_gguf_vocab(read_gguf_header(bytes, name).meta, name);
}

}  // namespace medusa
