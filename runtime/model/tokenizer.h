// Text <-> token ids through the sentencepiece library, from a .model file or from a
// vocabulary embedded in a GGUF file (turned into a sentencepiece model).
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace medusa {

struct ModelFile;

class Tokenizer {
public:
    static Tokenizer from_file(const std::string& path);
    // `proto` is a serialized sentencepiece ModelProto; `source` names it in errors.
    static Tokenizer from_serialized(const std::string& proto, const std::string& source);
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    std::vector<int> encode(const std::string& text, bool add_bos) const;
    std::string decode(const std::vector<int>& ids) const;
    // The bytes to print for `token` following `prev`, as llama2.c's run.c prints them:
    // "▁" is a space, a piece after BOS loses its leading space, <0xXX> pieces are raw bytes.
    std::string piece_text(int prev, int token) const;
    std::string piece(int id) const;
    int vocab_size() const;
    int bos_id() const;
    int eos_id() const;
    const std::string& source() const { return source_; }

private:
    Tokenizer();
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::string source_;
};

// Throws FormatError naming the tokenizer and the model when their vocabulary sizes differ.
void check_vocab_match(const ModelFile& model, const Tokenizer& tok);

}  // namespace medusa
