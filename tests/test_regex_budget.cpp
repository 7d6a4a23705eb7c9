// A tokenizer.json's pre-tokenizer regex runs on every prompt: one with nested quantifiers,
// (?:a|aa){1,21}(?=b)|a, backtracks millions of steps at each character, under PCRE2's own limit
// per match, and took 24 s for 2,000 characters. Each split now has a budget of backtracking steps
// proportional to its text (pretokenizer.cpp says how it is counted): that regex is refused at
// once, naming the file, while the regexes of real tokenizers on long texts of every kind (prose,
// runs of spaces, digits, newlines, punctuation) split exactly as PCRE2 does unbounded.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_rusage.h"
#include "model/model_file.h"
#include "model/pretokenizer.h"
#include "temp_dir.h"

using namespace medusa;

namespace {

const std::string kNested = "(?:a|aa){1,21}(?=b)|a";

// What PreTokenizer::split computes, with one unbounded pcre2_match per word: the reference.
std::vector<std::string_view> split_unbounded(const std::vector<std::string>& regexes, std::string_view text) {
    std::vector<std::string_view> pieces;
    if (!text.empty()) pieces.push_back(text);
    for (const std::string& re : regexes) {
        int error = 0;
        PCRE2_SIZE at = 0;
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(),
                                         PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &at, nullptr);
        REQUIRE(code);
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
        std::vector<std::string_view> out;
        for (std::string_view piece : pieces) {
            size_t start = 0, done = 0;
            while (start <= piece.size() &&
                   pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(piece.data()), piece.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr) >= 0) {
                const size_t b = pcre2_get_ovector_pointer(md)[0], e = pcre2_get_ovector_pointer(md)[1];
                if (b > done) out.push_back(piece.substr(done, b - done));
                if (e > b) {
                    out.push_back(piece.substr(b, e - b));
                    done = start = e;
                } else {
                    for (start = b + 1; start < piece.size() && (uint8_t(piece[start]) & 0xC0) == 0x80;) ++start;
                }
            }
            if (done < piece.size()) out.push_back(piece.substr(done));
        }
        pcre2_match_data_free(md);
        pcre2_code_free(code);
        pieces = std::move(out);
    }
    return pieces;
}

std::string repeat(const std::string& unit, size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += unit;
    return s;
}

}  // namespace

TEST_CASE("real pre-tokenizers split long texts as unbounded PCRE2 does", "[regex-budget]") {
    const std::string prose = repeat(
        "Once upon a time, there was a little girl named Lily. She liked to play with her dog's ball!\n"
        "\"Don't go,\" he said; it's 3:45 pm \xE2\x80\x94 12,345.67 dollars?! \xC3\x87" "a va? \xC3\x89lodie a "
        "mang\xC3\xA9 42 cr\xC3\xAApes. \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80\n\n    code();\t\tx = y + 1;\r\n",
        100000);
    const std::vector<std::pair<const char*, std::string>> texts = {
        {"100 KB of prose", prose},
        {"20 KB of spaces", std::string(20000, ' ')},
        {"20 KB of spaces, then a letter", std::string(20000, ' ') + "x"},
        {"20 KB of digits", std::string(20000, '7')},
        {"20 KB of newlines", std::string(20000, '\n')},
        {"20 KB of mixed whitespace", repeat(" \n\t \r\n", 20000)},
        {"20 KB of punctuation", std::string(20000, '!')},
        {"20 KB of contractions", repeat("'s'", 20000)}};
    std::vector<std::pair<std::string, std::vector<std::string>>> pres = {{"GPT-2 (ByteLevel)", {gpt2_regex()}}};
    for (const char* name : {"llama3", "qwen2", "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "default"}) {
        bool ignore_merges = false;
        pres.push_back({name, gguf_pre_tokenizer_regexes(name, ignore_merges, "x")});
    }
    for (const auto& [pre, regexes] : pres) {
        const PreTokenizer p(regexes, "tokenizer.json");
        for (const auto& [what, text] : texts) {
            INFO(pre << ": " << what);
            std::vector<std::string_view> words;
            REQUIRE_NOTHROW(words = p.split(text));
            CHECK(words == split_unbounded(regexes, text));
        }
    }
}

TEST_CASE("a pre-tokenizer regex that backtracks exponentially is refused, naming the file", "[regex-budget]") {
    const std::string text(2000, 'a');
    for (const std::string& re : {kNested, std::string("(a+)+$|\\s")}) {  // the second exceeds PCRE2's own match limit
        INFO(re);
        const PreTokenizer p({re}, "dir/tokenizer.json");
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH(p.split(text + "!"), "dir/tokenizer.json: pre-tokenizer regex backtracks too much: more than "
                                               "9244672 steps to split a text of 2001 bytes");
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    }
    // Short texts stay within the budget: the regex itself is not refused.
    CHECK(PreTokenizer({kNested}, "x").split("aaaab aaa") == std::vector<std::string_view>{"aaaa", "b ", "a", "a", "a"});
}

TEST_CASE("medusa tokenize refuses a backtracking tokenizer.json regex in seconds", "[regex-budget]") {
    test::TempDir tmp("medusa-regex-budget");
    // A byte-level vocabulary of single characters, split by the nested regex.
    nlohmann::json vocab = nlohmann::json::object();
    for (int c = 'a'; c <= 'z'; ++c) vocab[std::string(1, char(c))] = c - 'a';
    const nlohmann::json tokenizer = {
        {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", kNested}}}, {"behavior", "Isolated"}}},
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
    std::ofstream(tmp.path / "tokenizer.json") << tokenizer.dump();
    const std::string json = (tmp.path / "tokenizer.json").string();
    const test::ChildResult ok = test::run_medusa_limited({"tokenize", "--tokenizer", tmp.path.string(), "-p", "abab"});
    REQUIRE(ok.exit_code == 0);  // the folder is a tokenizer that works on short texts
    const auto start = std::chrono::steady_clock::now();
    const test::ChildResult r =
        test::run_medusa_limited({"tokenize", "--tokenizer", tmp.path.string(), "-p", std::string(2000, 'a')}, 5);
    CHECK(r.exit_code == 1);  // not 128 + SIGALRM
    CHECK_THAT(r.err, Catch::Contains(json + ": pre-tokenizer regex backtracks too much"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}
