#define PCRE2_CODE_UNIT_WIDTH 8
#include "model/pretokenizer.h"

#include <pcre2.h>

#include <map>
#include <stdexcept>

#include "model/format_error.h"
#include "model/utf8.h"

namespace medusa {

namespace {

// llama.cpp's regexes per tokenizer.ggml.pre (llama-vocab.cpp at the oracle's commit), written as
// they are there; PCRE2 reads \p{L}, \p{N}, \p{P} from its own Unicode tables.
const std::string kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const std::string kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// GPT-4o's o200k regex as llama.cpp runs it (LLAMA_VOCAB_PRE_TYPE_GPT4O): the tokenizer.json's
// \p{Lu}/\p{Ll} classes rewritten as "a letter that is not a-z" / "not A-Z" lookaheads, so case is
// told apart in ASCII only, and marks (\p{M}) are not part of a word.
const std::string kContractions = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?";
const std::string kGpt4o = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" + kContractions +
                           "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" + kContractions +
                           "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const std::string kCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

struct PreSpec {
    std::vector<std::string> regexes;
    bool ignore_merges = false;
};

const std::map<std::string, PreSpec>& pre_specs() {
    static const std::map<std::string, PreSpec> specs = [] {
        const PreSpec llama3{{kLlama3}, true};
        const PreSpec gpt2{{kGpt2}, false};
        const PreSpec qwen2{{kQwen2}, false};
        const PreSpec gpt4o{{kGpt4o}, false};
        const PreSpec starcoder{{"\\p{N}", kGpt2}, false};
        std::map<std::string, PreSpec> m = {
            {"default", {{"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}, false}},
            {"llama3", llama3}, {"llama-v3", llama3}, {"llama-bpe", llama3}, {"falcon3", llama3},
            {"dbrx", {{kLlama3}, false}}, {"smaug-bpe", {{kLlama3}, false}},
            // DeepSeek's tokenizer.json lists its cased letters and CJK ranges explicitly; the
            // code points are written as \x{..} so no editor or normalizer can change them.
            {"deepseek-llm",
             {{"[\r\n]",
               "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"
               "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}"
               "\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}"
               "\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}"
               "\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}"
               "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
               "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
               "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
               "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
               "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
               "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"
               "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
               "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
               "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"
               "\\x{1E900}-\\x{1E943}]+",
               "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+", "\\s+$",
               kCjk, "\\p{N}+"},
              false}},
            {"deepseek-coder", {{"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjk, "\\p{N}"}, false}},
            {"falcon", {{"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}, false}},
            {"gpt-2", gpt2}, {"phi-2", gpt2}, {"mpt", gpt2}, {"olmo", gpt2}, {"jais", gpt2},
            {"starcoder", starcoder}, {"refact", starcoder}, {"smollm", starcoder}, {"command-r", starcoder},
            {"codeshell", starcoder}, {"exaone", starcoder}, {"minerva-7b", starcoder},
            {"qwen2", qwen2}, {"deepseek-r1-qwen", qwen2}, {"megrez", qwen2}, {"stablelm2", qwen2},
            // Phi-4-mini and Llama 4 (their GGUF files name the pre-tokenizer "gpt-4o" and "llama4").
            {"gpt-4o", gpt4o}, {"llama4", gpt4o}, {"kanana2", gpt4o}, {"talkie", gpt4o}, {"minimax-m2", gpt4o},
        };
        return m;
    }();
    return specs;
}

}  // namespace

// What one split may spend in PCRE2's backtracking, counted the same on every machine: PCRE2
// counts its steps from each start position of a match and stops at the match limit, but never
// says what a match took. So each pcre2_match may try at most kWindow + 1 start positions (the
// offset limit), under a match limit that starts at kFirstLimit and doubles while it is hit, and
// is charged its limit times the positions it may have tried: never less than it spent. One
// regex's charges over a text may add up to kBudgetBase + kBudgetPerByte per byte. The regexes of
// real tokenizers spend at most 1/32 of that on 100 KB of prose and 20 KB runs of spaces, digits,
// newlines or punctuation (measured; test_regex_budget.cpp checks they pass); nested quantifiers
// spend steps exponential in the length they try, and are refused within milliseconds for a
// 2,000-byte text. Not counted: a class repeated without backtracking, so a regex that rescans the
// rest of the text from every position takes time quadratic in the text, unbudgeted.
constexpr size_t kWindow = 64;
constexpr uint32_t kFirstLimit = 64;
constexpr uint64_t kBudgetBase = uint64_t(1) << 20, kBudgetPerByte = 4096;

struct PreTokenizer::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

namespace {

struct MatchContext {
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    MatchContext() {
        // The interpreter (where JIT is missing) keeps its backtracking frames on the heap, and a
        // quantified group recurses: both far below PCRE2's defaults (20 MB, 10 million).
        pcre2_set_heap_limit(context, 8 * 1024);  // KiB
        pcre2_set_depth_limit(context, 100000);
    }
    ~MatchContext() { pcre2_match_context_free(context); }
};

// The first byte of the character after the one at `i`.
size_t next_char(std::string_view s, size_t i) {
    ++i;
    while (i < s.size() && (uint8_t(s[i]) & 0xC0) == 0x80) ++i;
    return i;
}

}  // namespace

PreTokenizer::PreTokenizer(const std::vector<std::string>& regexes, const std::string& source) : source_(source) {
    for (const std::string& re : regexes) {
        int error = 0;
        PCRE2_SIZE at = 0;
        auto c = std::make_unique<Compiled>();
        // UTF + UCP: \s, \p{..} and classes by Unicode properties; $ only at the very end, as in
        // the ECMAScript regexes llama.cpp runs.
        c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(),
                                PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_USE_OFFSET_LIMIT, &error, &at,
                                nullptr);
        if (!c->code) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(error, msg, sizeof msg);
            throw FormatError(source + ": pre-tokenizer regex cannot be compiled at offset " + std::to_string(at) +
                              ": " + reinterpret_cast<const char*>(msg));
        }
        pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);  // best effort: the interpreter gives the same matches
        regexes_.push_back(std::move(c));
    }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string_view> pieces;
    if (!text.empty()) pieces.push_back(text);
    const MatchContext mc;
    for (const auto& re : regexes_) {
        std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
            pcre2_match_data_create_from_pattern(re->code, nullptr), &pcre2_match_data_free);
        uint64_t budget = kBudgetBase + kBudgetPerByte * text.size();
        // The first match starting in [start, last] of `piece`: offsets, or NOMATCH.
        auto match = [&](std::string_view piece, size_t start, size_t last) {
            for (uint32_t limit = kFirstLimit;; limit *= 2) {
                pcre2_set_match_limit(mc.context, limit);
                pcre2_set_offset_limit(mc.context, last);
                const int rc = pcre2_match(re->code, reinterpret_cast<PCRE2_SPTR>(piece.data()), piece.size(), start,
                                           PCRE2_NO_UTF_CHECK, md.get(), mc.context);
                const size_t tried = (rc >= 0 ? pcre2_get_ovector_pointer(md.get())[0] : last) - start + 1;
                const uint64_t charge = uint64_t(limit) * tried;
                const bool exhausted = rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
                                       rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
                if (charge > budget || (exhausted && limit >= (1u << 30)))
                    throw FormatError(source_ + ": pre-tokenizer regex backtracks too much: more than " +
                                      std::to_string(kBudgetBase + kBudgetPerByte * text.size()) +
                                      " steps to split a text of " + std::to_string(text.size()) + " bytes");
                budget -= charge;
                if (!exhausted) return rc;
            }
        };
        std::vector<std::string_view> out;
        for (std::string_view piece : pieces) {
            // Each piece is its own subject: lookaheads and $ end at its end.
            size_t start = 0, done = 0;
            while (start <= piece.size()) {
                size_t last = start;
                for (size_t k = 0; k < kWindow && last < piece.size(); ++k) last = next_char(piece, last);
                const int rc = match(piece, start, last);
                if (rc == PCRE2_ERROR_NOMATCH) {
                    if (last >= piece.size()) break;
                    start = next_char(piece, last);
                    continue;
                }
                if (rc < 0)
                    throw std::runtime_error(source_ + ": pre-tokenizer regex failed on the text (PCRE2 error " +
                                             std::to_string(rc) + ")");
                const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
                const size_t b = ov[0], e = ov[1];
                if (b > done) out.push_back(piece.substr(done, b - done));
                if (e > b) {
                    out.push_back(piece.substr(b, e - b));
                    done = start = e;
                } else {  // an empty match: step over one character
                    start = next_char(piece, b);
                }
            }
            if (done < piece.size()) out.push_back(piece.substr(done));
        }
        pieces = std::move(out);
    }
    return pieces;
}

std::vector<std::string> gguf_pre_tokenizer_regexes(const std::string& pre, bool& ignore_merges,
                                                    const std::string& source) {
    const auto& specs = pre_specs();
    const auto it = specs.find(pre.empty() ? "default" : pre);
    if (it == specs.end()) {
        std::string known;
        for (const auto& [name, _] : specs) known += (known.empty() ? "" : ", ") + name;
        throw FormatError(source + ": pre-tokenizer '" + pre + "' is not supported (" + known + " are)");
    }
    ignore_merges = it->second.ignore_merges;
    return it->second.regexes;
}

const std::string& gpt2_regex() { return kGpt2; }

std::string sanitize_utf8(std::string_view s) {
    static const char kReplacement[] = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        const size_t len = utf8_sequence(s, i, cp);
        if (len > 0) out.append(s.substr(i, len));
        else out += kReplacement;
        i += len > 0 ? len : 1;
    }
    return out;
}

}  // namespace medusa
