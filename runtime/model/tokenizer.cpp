#include "model/tokenizer.h"

#include <sentencepiece_processor.h>

#include <stdexcept>

#include "model/model_file.h"

namespace medusa {

Tokenizer::Tokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::string& path) {
    Tokenizer t;
    t.source_ = path;
    auto status = t.sp_->Load(path);
    if (!status.ok()) throw FormatError(path + ": not a sentencepiece model: " + status.ToString());
    return t;
}

Tokenizer Tokenizer::from_serialized(const std::string& proto, const std::string& source) {
    Tokenizer t;
    t.source_ = source;
    auto status = t.sp_->LoadFromSerializedProto(proto);
    if (!status.ok()) throw FormatError(source + ": vocabulary cannot be loaded: " + status.ToString());
    return t;
}

std::vector<int> Tokenizer::encode(const std::string& text, bool add_bos) const {
    std::vector<int> ids;
    if (add_bos) {
        if (bos_id() < 0) throw FormatError(source_ + ": the vocabulary has no beginning-of-sequence piece");
        ids.push_back(bos_id());
    }
    if (!text.empty()) {
        std::vector<int> body;
        auto status = sp_->Encode(text, &body);
        if (!status.ok()) throw std::runtime_error(source_ + ": cannot encode text: " + status.ToString());
        ids.insert(ids.end(), body.begin(), body.end());
    }
    return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    std::string out;
    auto status = sp_->Decode(ids, &out);
    if (!status.ok()) throw std::invalid_argument(source_ + ": cannot decode: " + status.ToString());
    return out;
}

std::string Tokenizer::piece(int id) const { return sp_->IdToPiece(id); }

std::string Tokenizer::piece_text(int prev, int token) const {
    if (token < 0 || token >= vocab_size() || sp_->IsControl(token)) return "";
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
    if (prev == bos_id() && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
}

int Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int Tokenizer::bos_id() const { return sp_->bos_id(); }
int Tokenizer::eos_id() const { return sp_->eos_id(); }

void check_vocab_match(const ModelFile& model, const Tokenizer& tok) {
    if (tok.vocab_size() != model.config.vocab_size)
        throw FormatError(tok.source() + ": tokenizer has " + std::to_string(tok.vocab_size()) + " pieces but " +
                          model.path + " has a vocabulary of " + std::to_string(model.config.vocab_size) +
                          ": they do not belong together");
}

}  // namespace medusa
