#include "model/special_tokens.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "model/bpe_vocab.h"

namespace medusa {

std::vector<TextFragment> split_special_tokens(std::string_view text, std::vector<SpecialToken> specials) {
    std::stable_sort(specials.begin(), specials.end(),
                     [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
    std::vector<TextFragment> fragments;
    if (!text.empty()) fragments.push_back({-1, text});
    for (const SpecialToken& s : specials) {
        if (s.text.empty()) continue;
        std::vector<TextFragment> out;
        for (const TextFragment& f : fragments) {
            if (f.token >= 0) {
                out.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (size_t at; (at = rest.find(s.text)) != std::string_view::npos;) {
                if (at > 0) out.push_back({-1, rest.substr(0, at)});
                out.push_back({s.id, rest.substr(at, s.text.size())});
                rest.remove_prefix(at + s.text.size());
                if (s.rstrip)  // what C's isspace takes for space, as llama.cpp strips
                    while (!rest.empty() && (rest[0] == ' ' || (rest[0] >= '\t' && rest[0] <= '\r'))) rest.remove_prefix(1);
            }
            if (!rest.empty()) out.push_back({-1, rest});
        }
        fragments = std::move(out);
    }
    return fragments;
}

namespace {

// llama.cpp's lists (llama_vocab::impl::load): the texts it takes for end-of-turn, end-of-message
// and fill-in-the-middle tokens, and those that end generation. It marks each such token control.
// (For the end-of-turn and fill-in-the-middle groups it takes only the first text it meets, and
// none when the file names that token; vocabularies hold at most one text of a group.)
const char* const kLlamaCppControlTexts[] = {
    // end of turn, end of message
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
    "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>", "<end_of_utterance>", "<|eom_id|>",
    // fill in the middle: prefix, suffix, middle, pad, repository, file separator
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<PRE>",
    "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "<MID>",
    "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>", "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
    // end of generation
    "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "</s>", "[EOS]", "<eos>", "<turn|>", "<|tool_response>", "[e~[",
};

}  // namespace

std::vector<int32_t> llama_cpp_token_types(const std::vector<std::string>& tokens, std::vector<int32_t> types) {
    if (types.size() != tokens.size()) types.assign(tokens.size(), kTokenNormal);
    // llama.cpp looks tokens up by text: a text held by more than one token means its last one.
    std::unordered_map<std::string_view, size_t> id;
    id.reserve(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) id[tokens[i]] = i;
    auto find = [&](std::string_view text) -> int64_t {
        const auto it = id.find(text);
        return it == id.end() ? -1 : int64_t(it->second);
    };
    for (const char* text : kLlamaCppControlTexts)
        if (const int64_t i = find(text); i >= 0) types[size_t(i)] = kTokenControl;
    // gpt-oss's channel tokens are always cut out of text.
    for (const char* text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
        if (const int64_t i = find(text); i >= 0) types[size_t(i)] = kTokenUserDefined;
    // o200k_harmony and solar-open: "<|end|>" does not end generation there, and is user-defined.
    const bool has_call = find("<|call|>") >= 0 || find("<|calls|>") >= 0;
    if (const int64_t end = find("<|end|>");
        end >= 0 && has_call && (find("<|return|>") >= 0 || find("<|flush|>") >= 0))
        types[size_t(end)] = kTokenUserDefined;
    // Gemma 4 and PaddleOCR: with "<|tool_response>" present, "</s>" is an ordinary token.
    if (const int64_t s = find("</s>"); s >= 0 && find("<|tool_response>") >= 0) types[size_t(s)] = kTokenNormal;
    return types;
}

std::vector<int32_t> llama_cpp_rstrip_tokens(const std::string& model_name, const std::vector<std::string>& tokens,
                                             const std::vector<int32_t>& types) {
    std::string name = model_name;
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (name.find("phi-3") == std::string::npos && name.find("phi3") == std::string::npos) return {};
    const std::vector<int32_t> llama_types = llama_cpp_token_types(tokens, types);
    // By text, the last token holding it (llama.cpp's lookup).
    std::unordered_map<std::string_view, size_t> id;
    for (size_t i = 0; i < tokens.size(); ++i) id[tokens[i]] = i;
    std::vector<bool> strip(tokens.size(), false);
    for (size_t i = 0; i < tokens.size() && i < llama_types.size(); ++i)
        strip[i] = llama_types[i] == kTokenControl || llama_types[i] == kTokenUserDefined || llama_types[i] == kTokenUnknown;
    if (const auto it = id.find("</s>"); it != id.end()) strip[it->second] = true;
    for (const char* text : {"<unk>", "<s>", "<|endoftext|>"})
        if (const auto it = id.find(text); it != id.end()) strip[it->second] = false;
    std::vector<int32_t> out;
    for (size_t i = 0; i < strip.size(); ++i)
        if (strip[i]) out.push_back(int32_t(i));
    return out;
}

}  // namespace medusa
