#include "model/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "model/bpe_tokenizer.h"
#include "model/file_bytes.h"
#include "model/gguf_metadata.h"
#include "model/gguf_vocab.h"
#include "model/hf_tokenizer.h"
#include "model/format_error.h"
#include "model/sentencepiece_proto_check.h"
#include "model/special_tokens.h"

namespace medusa {

namespace fs = std::filesystem;

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

namespace {

// Loads a serialized sentencepiece model, naming `source` in every failure: sentencepiece's trie
// builder throws (a zero-length piece) without saying which file, a malformed normalization trie
// would crash it (so the bytes are checked first), and a vocabulary whose ordinary pieces are all
// control pieces loads, then fails on the first prompt.
std::unique_ptr<sentencepiece::SentencePieceProcessor> load_sentencepiece(const std::string& proto,
                                                                          const std::string& source,
                                                                          const char* what) {
    check_sentencepiece_proto(proto, source);
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    sentencepiece::util::Status status;
    try {
        status = sp->LoadFromSerializedProto(proto);
    } catch (const std::exception& e) {
        throw FormatError(source + ": " + what + ": " + e.what());
    }
    if (!status.ok()) throw FormatError(source + ": " + what + ": " + status.ToString());
    // A probe of ASCII, accents, CJK and an emoji: what fails here would fail at the first prompt.
    std::vector<int> ids;
    try {
        status = sp->Encode("Hello, world! 0123 \xC3\xA9t\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80", &ids);
    } catch (const std::exception& e) {
        throw FormatError(source + ": the vocabulary cannot encode text: " + e.what());
    }
    if (!status.ok()) throw FormatError(source + ": the vocabulary cannot encode text: " + status.ToString());
    for (int id : ids)
        if (id < 0 || id >= sp->GetPieceSize())
            throw FormatError(source + ": the vocabulary encodes text to the id " + std::to_string(id) +
                              ", outside its " + std::to_string(sp->GetPieceSize()) + " pieces");
    // sentencepiece's BPE, char and word models look characters (and words) up by exact piece, control
    // pieces included, whose surface is empty: any text spelling one, such as a one-letter control
    // piece, then fails with "all normalized characters are not consumed". Spell each one.
    for (int id = 0; id < sp->GetPieceSize(); ++id) {
        if (!sp->IsControl(id)) continue;
        const std::string piece = sp->IdToPiece(id);
        std::string text;
        for (size_t i = 0; i < piece.size();) {
            const bool space = piece.compare(i, 3, "\xE2\x96\x81") == 0;  // U+2581, sentencepiece's space
            text += space ? ' ' : piece[i];
            i += space ? 3 : 1;
        }
        try {
            status = sp->Encode(text, &ids);
        } catch (const std::exception& e) {
            status = sentencepiece::util::Status(sentencepiece::util::StatusCode::kInternal, e.what());
        }
        if (!status.ok())
            throw FormatError(source + ": the vocabulary cannot encode text spelling its control piece " +
                              std::to_string(id) + " '" + piece + "': " + status.ToString());
    }
    return sp;
}

}  // namespace

Tokenizer Tokenizer::from_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const fs::path json = fs::path(path) / "tokenizer.json";  // what errors in its regexes name
        if (fs::exists(json)) return from_serialized(load_hf_vocab(path), json.string());
        if (fs::exists(fs::path(path) / "tokenizer.model")) return from_file((fs::path(path) / "tokenizer.model").string());
        throw FormatError(path + ": holds neither tokenizer.json nor tokenizer.model");
    }
    if (fs::path(path).filename() == "tokenizer.json")
        return from_serialized(load_hf_vocab(fs::path(path).parent_path().string()), path);
    const FileHead magic = read_file_head(path, 4);
    if (magic.bytes == std::vector<uint8_t>{'G', 'G', 'U', 'F'})  // only the header: not a model's tensors
        return from_serialized(read_gguf_vocab(read_gguf_header_of_file(path).meta, path), path);
    // A sentencepiece model is a protobuf of at most a few MB (Llama 2's 0.5, Gemma's 4.2).
    const auto bytes = read_file_bytes(path, kMaxTextFileBytes);
    const std::string proto(bytes->begin(), bytes->end());
    Tokenizer t;
    t.source_ = path;
    t.sp_ = load_sentencepiece(proto, path, "not a sentencepiece model");
    t.init_sentencepiece(proto);
    return t;
}

Tokenizer Tokenizer::from_serialized(const std::string& proto, const std::string& source) {
    Tokenizer t;
    t.source_ = source;
    t.sp_ = load_sentencepiece(proto, source, "vocabulary cannot be loaded");
    t.init_sentencepiece(proto);
    return t;
}

void Tokenizer::init_sentencepiece(const std::string& proto) {
    SentencepieceExtras extras;
    try {
        extras = read_sentencepiece_extras(proto);
    } catch (const std::invalid_argument& e) {  // what sentencepiece parsed but protobuf's framing does not allow
        throw FormatError(source_ + ": not a sentencepiece model: " + e.what());
    }
    spm_user_defined_ = std::move(extras.user_defined);
    spm_space_prefix_ = extras.add_dummy_prefix;
    for (const SpecialToken& s : spm_user_defined_)
        if (s.id < 0 || s.id >= sp_->GetPieceSize() || sp_->IdToPiece(s.id) != s.text)
            throw FormatError(source_ + ": not a sentencepiece model: user-defined piece " + std::to_string(s.id) +
                              " does not read back as sentencepiece reads it");
    for (int id = 0; id < sp_->GetPieceSize(); ++id)
        if (sp_->IsControl(id) || sp_->IsUnknown(id)) spm_control_.push_back({sp_->IdToPiece(id), id});
}

Tokenizer Tokenizer::from_serialized(const EmbeddedVocab& vocab, const std::string& source) {
    if (!vocab.bpe) {
        Tokenizer t = from_serialized(vocab.sentencepiece, source);
        for (int32_t id : vocab.unknown)
            if (id >= 0 && id < t.vocab_size() && t.sp_->IsUnused(id)) t.spm_control_.push_back({t.sp_->IdToPiece(id), id});
        for (std::vector<SpecialToken>* specials : {&t.spm_user_defined_, &t.spm_control_})
            for (SpecialToken& s : *specials)
                s.rstrip = std::binary_search(vocab.rstrip.begin(), vocab.rstrip.end(), s.id);
        return t;
    }
    Tokenizer t;
    t.source_ = source;
    t.bpe_ = std::make_unique<BpeTokenizer>(vocab.bpe, source, vocab.rstrip);
    return t;
}

std::vector<int> Tokenizer::encode(const std::string& text, bool add_bos, bool parse_special) const {
    std::vector<int> ids;
    if (add_bos) {
        if (bos_id() < 0) throw FormatError(source_ + ": the vocabulary has no beginning-of-sequence token");
        ids.push_back(bos_id());
    }
    if (bpe_) {
        const std::vector<int> body = bpe_->encode(text, parse_special);
        ids.insert(ids.end(), body.begin(), body.end());
        return ids;
    }
    // User-defined pieces are cut out here, not left to sentencepiece: llama.cpp cuts the longest
    // first, where sentencepiece takes the longest at each place, and llama.cpp puts the space
    // prefix in front of the text after each one too, as sentencepiece does for each piece it encodes.
    std::vector<SpecialToken> specials = spm_user_defined_;
    if (parse_special) specials.insert(specials.end(), spm_control_.begin(), spm_control_.end());
    for (const TextFragment& f : split_special_tokens(text, std::move(specials))) {
        if (f.token >= 0) {
            ids.push_back(f.token);
            continue;
        }
        std::vector<int> body;
        auto status = sp_->Encode(std::string(f.text), &body);
        if (!status.ok()) throw std::runtime_error(source_ + ": cannot encode text: " + status.ToString());
        ids.insert(ids.end(), body.begin(), body.end());
    }
    return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    if (bpe_) {
        std::string out;
        for (int id : ids) out += bpe_->token_bytes(id);
        return out;
    }
    std::string out;
    auto status = sp_->Decode(ids, &out);
    if (!status.ok()) throw std::invalid_argument(source_ + ": cannot decode: " + status.ToString());
    return out;
}

std::string Tokenizer::piece(int id) const {
    if (bpe_) return id >= 0 && id < vocab_size() ? bpe_->vocab().tokens[size_t(id)] : "";
    return sp_->IdToPiece(id);
}

int Tokenizer::find_piece(const std::string& p) const {
    if (bpe_) return bpe_->find(p);
    const int id = sp_->PieceToId(p);
    return id >= 0 && sp_->IdToPiece(id) == p ? id : -1;
}

bool Tokenizer::is_control(int id) const {
    if (id < 0 || id >= vocab_size()) return false;
    if (bpe_) return !bpe_->vocab().types.empty() && bpe_->vocab().types[size_t(id)] == kTokenControl;
    return sp_->IsControl(id);
}

float Tokenizer::score(int id) const {
    if (bpe_ || id < 0 || id >= vocab_size()) return 0.0f;
    return sp_->GetScore(id);
}

int32_t Tokenizer::token_type(int id) const {
    if (id < 0 || id >= vocab_size()) return kTokenUnused;
    if (bpe_) {
        const auto& types = bpe_->vocab().types;
        return types.empty() || types[size_t(id)] <= 0 ? kTokenNormal : types[size_t(id)];
    }
    if (sp_->IsUnknown(id)) return kTokenUnknown;
    if (sp_->IsControl(id)) return kTokenControl;
    if (sp_->IsUnused(id)) return kTokenUnused;
    if (sp_->IsByte(id)) return kTokenByte;
    return kTokenNormal;
}

std::string Tokenizer::piece_text(int prev, int token) const {
    if (token < 0 || token >= vocab_size() || is_control(token)) return "";
    if (bpe_) return bpe_->token_bytes(token);
    std::string p = sp_->IdToPiece(token);
    auto hex = [](char ch) {
        if (ch >= '0' && ch <= '9') return ch - '0';
        if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
        if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
        return -1;
    };
    if (p.size() == 6 && p.compare(0, 3, "<0x") == 0 && p[5] == '>' && hex(p[3]) >= 0 && hex(p[4]) >= 0)
        return std::string(1, char(hex(p[3]) * 16 + hex(p[4])));  // a raw byte (byte fallback)
    std::string out;
    for (size_t i = 0; i < p.size();) {
        if (p.compare(i, 3, "\xE2\x96\x81") == 0) {  // U+2581, sentencepiece's space
            out += ' ';
            i += 3;
        } else {
            out += p[i++];
        }
    }
    if (spm_space_prefix_ && prev == bos_id() && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
}

size_t Tokenizer::longest_token_bytes() const {
    size_t longest = 1;
    for (int id = 0; id < vocab_size(); ++id)
        longest = std::max(longest, bpe_ ? bpe_->token_bytes(id).size() : sp_->IdToPiece(id).size());
    return longest;
}

int Tokenizer::vocab_size() const { return bpe_ ? int(bpe_->vocab().tokens.size()) : sp_->GetPieceSize(); }
int Tokenizer::bos_id() const { return bpe_ ? bpe_->vocab().bos : sp_->bos_id(); }
int Tokenizer::eos_id() const { return bpe_ ? bpe_->vocab().eos : sp_->eos_id(); }
bool Tokenizer::adds_bos() const { return bpe_ ? bpe_->vocab().add_bos : bos_id() >= 0; }

void check_vocab_match(const ModelFile& model, const Tokenizer& tok) {
    if (tok.vocab_size() != model.config.vocab_size)
        throw FormatError(tok.source() + ": tokenizer has " + std::to_string(tok.vocab_size()) + " pieces but " +
                          model.path + " has a vocabulary of " + std::to_string(model.config.vocab_size) +
                          ": they do not belong together");
}

}  // namespace medusa
