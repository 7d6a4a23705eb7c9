// libFuzzer target: the JSON files of a Hugging Face folder whose tokenizer.json is a
// sentencepiece-style BPE (Gemma's, Phi-3's), read over a fixed small tokenizer.model: the input
// is tokenizer_config.json, tokenizer.json and config.json, split at NUL bytes. Each folder gives a
// sentencepiece vocabulary that tokenizes and decodes text, special tokens parsed, to ids inside
// its vocabulary, or is refused with a FormatError.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/gguf_vocab.h"
#include "model/hf_sentencepiece_vocab.h"
#include "model/tokenizer.h"

namespace {

namespace fs = std::filesystem;

// tokenizer.model of <unk> <s> </s>, the 256 byte pieces and a few letters and words.
const std::string& folder() {
    static const std::string dir = [] {
        const fs::path d = fs::temp_directory_path() / ("medusa-fuzz-hf-spm-" + std::to_string(::getpid()));
        fs::create_directories(d);
        medusa::GgufVocab v;
        v.tokens = {"<unk>", "<s>", "</s>"};
        v.types = {2, 3, 3};
        char byte[8];
        for (int b = 0; b < 256; ++b) {
            std::snprintf(byte, sizeof byte, "<0x%02X>", b);
            v.tokens.push_back(byte), v.types.push_back(6);
        }
        for (const char* p : {"\xE2\x96\x81", "a", "b", "c", "\xE2\x96\x81" "a", "ab", "\xE2\x96\x81" "ab"})
            v.tokens.push_back(p), v.types.push_back(1);
        v.scores.assign(v.tokens.size(), 0.0f);
        for (size_t i = 259; i < v.tokens.size(); ++i) v.scores[i] = -float(i);
        std::ofstream(d / "tokenizer.model", std::ios::binary) << medusa::sentencepiece_proto_from_vocab(v, "seed");
        return d.string();
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> parts(1);
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0 && parts.size() < 3) parts.emplace_back();
        else parts.back() += char(data[i]);
    }
    parts.resize(3);
    const auto tokenizer = medusa::fuzz::json_input(reinterpret_cast<const uint8_t*>(parts[1].data()), parts[1].size());
    if (!tokenizer || !tokenizer->is_object()) return 0;
    // A vocabulary of millions of padding pieces is allowed, and slow: not what this looks for.
    auto too_big = [](const nlohmann::json& c) {
        const auto it = c.find("vocab_size");
        return it != c.end() && it->is_number() && it->get<double>() > 4096;
    };
    if (const auto cfg = medusa::fuzz::json_input(reinterpret_cast<const uint8_t*>(parts[2].data()), parts[2].size());
        cfg && cfg->is_object() &&
        (too_big(*cfg) || (cfg->contains("text_config") && (*cfg)["text_config"].is_object() && too_big((*cfg)["text_config"]))))
        return 0;
    try {
        const medusa::EmbeddedVocab v = medusa::load_hf_sentencepiece_vocab(folder(), *tokenizer, parts[0], parts[2]);
        const auto tok = medusa::Tokenizer::from_serialized(v, "tokenizer.model");
        for (const std::string& sample : {std::string("ab c <s>a</s> b\n\t\xC3"), parts[0].substr(0, 256)}) {
            const auto ids = tok.encode(sample, true, true);
            for (int id : ids) medusa::fuzz::check(id >= 0 && id < tok.vocab_size());
            (void)tok.decode(ids);
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
