// Text <-> token ids. Two kinds behind one interface: sentencepiece models (through the
// sentencepiece library: .model files, and GGUF "llama" vocabularies turned into one) and
// byte-level BPE (model/bpe_tokenizer: GGUF "gpt2" vocabularies, Hugging Face tokenizer.json).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/bpe_vocab.h"
#include "model/special_tokens.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace medusa {

struct ModelFile;
class BpeTokenizer;

class Tokenizer {
public:
    // A sentencepiece .model, the vocabulary of a GGUF file (which need hold no model), a Hugging
    // Face tokenizer.json, or a folder holding tokenizer.json or tokenizer.model.
    static Tokenizer from_file(const std::string& path);
    // `proto` is a serialized sentencepiece ModelProto; `source` names it in errors.
    static Tokenizer from_serialized(const std::string& proto, const std::string& source);
    // The vocabulary a model file carries (ModelFile::embedded_tokenizer).
    static Tokenizer from_serialized(const EmbeddedVocab& vocab, const std::string& source);
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    // BOS first when add_bos. parse_special: special tokens written in the text ("<|im_start|>")
    // become their ids; otherwise only user-defined tokens do (llama.cpp's parse_special). As in
    // llama.cpp, they are cut out longest first and the text between them is tokenized piece by
    // piece: a sentencepiece vocabulary with a space prefix puts one in front of every piece.
    std::vector<int> encode(const std::string& text, bool add_bos, bool parse_special = false) const;
    std::string decode(const std::vector<int>& ids) const;
    // The bytes to print for `token` following `prev`: control tokens print nothing; sentencepiece
    // pieces as llama2.c's run.c prints them ("▁" is a space, a piece after BOS loses its leading
    // space where the vocabulary puts one in front of the text, <0xXX> pieces are raw bytes); BPE
    // tokens their bytes.
    std::string piece_text(int prev, int token) const;
    std::string piece(int id) const;             // the token as the vocabulary spells it
    int find_piece(const std::string& piece) const;  // the id spelt `piece`, or -1
    bool is_control(int id) const;
    // A sentencepiece piece's score and llama.cpp token type (model/bpe_vocab.h's TokenType), for
    // writing the vocabulary out; byte-level BPE tokens score 0.
    float score(int id) const;
    int32_t token_type(int id) const;
    // The most bytes of text one token stands for: its spelling in the vocabulary (a
    // sentencepiece "▁" counts its 3 bytes for the 1 of a space). A text of more than
    // n * longest_token_bytes() bytes has more than n tokens, unless the tokenizer's normalizer
    // drops text (collapsed spaces): what callers bound a prompt by before tokenizing it.
    size_t longest_token_bytes() const;
    int vocab_size() const;
    int bos_id() const;
    int eos_id() const;
    bool adds_bos() const;  // whether the model's prompts start with BOS (Qwen2's do not)
    bool byte_level() const { return bpe_ != nullptr; }
    const std::string& source() const { return source_; }

private:
    Tokenizer();
    void init_sentencepiece(const std::string& proto);
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    // A sentencepiece vocabulary's special pieces, cut out of text before sentencepiece sees it
    // (llama.cpp's way): user-defined ones always, control and unknown ones (EmbeddedVocab::unknown
    // too) when parsing specials.
    std::vector<SpecialToken> spm_user_defined_, spm_control_;
    bool spm_space_prefix_ = true;  // its normalizer puts a space in front of the text
    std::unique_ptr<BpeTokenizer> bpe_;
    std::string source_;
};

// Throws FormatError naming the tokenizer and the model when their vocabulary sizes differ.
void check_vocab_match(const ModelFile& model, const Tokenizer& tok);

}  // namespace medusa
