// sentencepiece models carry their normalization rules as a darts-clone trie (precompiled_charsmap)
// that libsentencepiece follows without bounds checks: malformed ones, written here unit by unit,
// must be refused at load with one line naming the file, never reach sentencepiece (where three of
// them crashed `medusa tokenize` with SIGSEGV); real ones, trained by spm_train
// (scripts/make_sentencepiece_fixtures.sh), must tokenize exactly as spm_encode does.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli_rusage.h"
#include "model/model_file.h"
#include "model/sentencepiece_proto_check.h"
#include "model/tokenizer.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/sentencepiece/";

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void put_varint(std::string& out, uint64_t v) {
    while (v >= 0x80) out += char((v & 0x7f) | 0x80), v >>= 7;
    out += char(v);
}

std::string bytes_field(int field, const std::string& payload) {
    std::string out;
    put_varint(out, uint64_t(field) << 3 | 2);
    put_varint(out, payload.size());
    return out + payload;
}

// A darts-clone double array, unit by unit. Unused units get a leaf's label (top bit set), which
// no byte matches, as darts-clone's builder leaves them.
struct Trie {
    static constexpr uint32_t kUnused = 0x80000000u;
    std::vector<uint32_t> units;

    explicit Trie(size_t blocks) : units(blocks * 256, kUnused) {}
    void root(uint32_t state) { units[0] = state << 10; }  // the search starts at 0 ^ offset
    // A transition from `state` on `byte` to state `to`; with `leaf`, a rule ends there whose
    // replacement starts at byte `value` of the replacements.
    void edge(uint32_t state, uint8_t byte, uint32_t to, bool leaf = false, uint32_t value = 0) {
        const uint32_t unit = state ^ byte, offset = unit ^ to;
        REQUIRE(offset < (1u << 21));
        units[unit] = offset << 10 | (leaf ? 0x100u : 0) | byte;
        if (leaf) units[to] = kUnused | value;
    }
    // <trie bytes><units><replacements>, with the trie's byte count as given (default: the truth).
    std::string blob(const std::string& replacements, int64_t trie_bytes = -1) const {
        const uint32_t size = trie_bytes < 0 ? uint32_t(units.size() * 4) : uint32_t(trie_bytes);
        std::string out(4 + units.size() * 4, '\0');
        std::memcpy(out.data(), &size, 4);
        std::memcpy(out.data() + 4, units.data(), units.size() * 4);
        return out + replacements;
    }
};

// One key, a state per byte (state 256 * (i + 1) after i bytes); `every` puts a rule at each byte.
Trie chain(const std::string& key, bool every = false, uint32_t value = 0) {
    Trie t(key.size() + 2);
    t.root(256);
    for (size_t i = 0; i < key.size(); ++i)
        t.edge(uint32_t(256 * (i + 1)), uint8_t(key[i]), uint32_t(256 * (i + 2)), every || i + 1 == key.size(), value);
    return t;
}

// tok512.model with a normalizer_spec (field 3) or denormalizer_spec (5) holding `charsmap`
// appended: protobuf merges it into the model's own, and this charsmap is the last one.
std::string tok512_with(const std::string& charsmap, int spec = 3) {
    return read_all(test::model_path("tok512.model")) + bytes_field(spec, bytes_field(2, charsmap));
}

std::string load_error(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
    try {
        const Tokenizer tok = Tokenizer::from_file(path.string());
        (void)tok.encode("hello hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh ab cb", true, false);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "no error";
}

struct Crafted {
    std::string name, bytes, problem;
};

std::vector<Crafted> crafted_models() {
    const Trie h = chain("h");
    Trie far(1);
    far.units[0] = 0x1FFFFFu << 10 | 0x200;  // the root's offset << 8: 2^29 units away
    Trie out_of_block = chain("h");
    out_of_block.edge(256, 'h', 256 * 9);  // a state past the trie's 3 blocks
    Trie loop(2);
    loop.root(256);
    loop.edge(256, 'h', 256, true, 0);  // "hhh..." matches a rule at every byte, without end
    const std::string hh(33, 'h');
    return {
        {"trie-oob.model", tok512_with(far.blob("X\0"s)), "state 536870656, whose transitions lie past the trie's 256 units"},
        {"state-oob.model", tok512_with(out_of_block.blob("X\0"s)), "whose transitions lie past the trie's 768 units"},
        {"value-oob.model", tok512_with(chain("h", false, 0x7FFFFF00).blob("X\0"s)),
         "a rule's replacement starts at byte 2147483392 of 2 bytes"},
        {"unterminated.model", tok512_with(h.blob("X")), "does not end with a NUL inside the blob"},
        {"size-lies.model", tok512_with(h.blob("", int64_t(h.units.size() * 4 + 3))),
         "says its trie has 3075 bytes but only 3072 follow"},
        {"size-zero.model", tok512_with(h.blob("X\0"s, 0)), "its trie is empty"},
        {"33-rules.model", tok512_with(chain(hh, true).blob("X\0"s)), "match more than 32 of its rules at once"},
        {"loop.model", tok512_with(loop.blob("X\0"s)), "its trie loops back to state 256"},
        {"denormalizer.model", tok512_with(far.blob("X\0"s), 5), "denormalizer_spec (precompiled_charsmap)"},
    };
}

}  // namespace

TEST_CASE("malformed normalization tries are refused at load, naming the file", "[spm-charsmap]") {
    test::TempDir tmp("medusa-charsmap");
    for (const Crafted& c : crafted_models()) {
        INFO(c.name);
        const std::string path = (tmp.path / c.name).string();
        const std::string err = load_error(path, c.bytes);
        CHECK_THAT(err, Catch::StartsWith(path + ": not a sentencepiece model: the normalization rules of its ") &&
                            Catch::Contains(c.problem));
        CHECK(err.find('\n') == std::string::npos);
    }
}

TEST_CASE("tries at sentencepiece's limits load and tokenize", "[spm-charsmap]") {
    test::TempDir tmp("medusa-charsmap-ok");
    // 32 rules along "hhh...": as many matches as NormalizePrefix keeps.
    CHECK(load_error(tmp.path / "32-rules.model", tok512_with(chain(std::string(32, 'h'), true).blob("X\0"s))) ==
          "no error");
    // "ab" and "cb" share the state after their first byte, as darts-clone shares equal subtries.
    Trie shared(4);
    shared.root(256);
    shared.edge(256, 'a', 512);
    shared.edge(256, 'c', 512);
    shared.edge(512, 'b', 768, true, 2);
    const fs::path dag = tmp.path / "dag.model";
    CHECK(load_error(dag, tok512_with(shared.blob("X\0Y\0"s))) == "no error");
    const Tokenizer tok = Tokenizer::from_file(dag.string());
    CHECK(tok.encode("ab", false, false) == tok.encode("Y", false, false));
    CHECK(tok.encode("cb", false, false) == tok.encode("Y", false, false));
}

TEST_CASE("real normalization rules tokenize as spm_encode does", "[spm-charsmap]") {
    std::ifstream lines(kFixtures + "expected_ids.tsv");
    int checked = 0;
    for (std::string line; std::getline(lines, line);) {
        const size_t a = line.find('\t'), b = line.find('\t', a + 1);
        const std::string model = line.substr(0, a), text = line.substr(a + 1, b - a - 1);
        std::vector<int> expected;
        std::istringstream ids(line.substr(b + 1));
        for (int id; ids >> id;) expected.push_back(id);
        INFO(model << ": " << text);
        const Tokenizer tok = Tokenizer::from_file(kFixtures + model);
        CHECK(tok.encode(text, false, false) == expected);
        ++checked;
    }
    CHECK(checked == 8);
    // rules.model's denormalizer turns "x" (what it normalizes "AB" to) back into "AB".
    const Tokenizer rules = Tokenizer::from_file(kFixtures + "rules.model");
    CHECK(rules.decode(rules.encode("AB x", false, false)) == "AB AB");
    for (const char* model : {"nmt_nfkc.model", "rules.model"})
        CHECK_NOTHROW(check_sentencepiece_proto(read_all(kFixtures + model), model));
}

TEST_CASE("a sentencepiece model of more than 2^20 pieces is refused before it is parsed", "[spm-charsmap]") {
    test::TempDir tmp("medusa-charsmap-pieces");
    std::string proto;
    for (int i = 0; i <= (1 << 20); ++i) proto += bytes_field(1, "");
    const std::string path = (tmp.path / "pieces.model").string();
    CHECK(load_error(path, proto) == path + ": not a sentencepiece model: more than 1048576 pieces");
    CHECK_THAT(load_error(path, "\x0a\x05" "ab"s), Catch::StartsWith(path + ": not a sentencepiece model: malformed protobuf"));
}

TEST_CASE("medusa tokenize and export-gguf refuse a crafted trie with one line and no signal", "[spm-charsmap]") {
    test::TempDir tmp("medusa-charsmap-cli");
    const auto crafted = crafted_models();
    auto tokenize = [](const fs::path& tokenizer) {
        return std::vector<std::string>{"tokenize", "--tokenizer", tokenizer.string(), "-p", "hello hhhhhhhhhhhhhhhhhhhhh"};
    };
    struct Case {
        std::vector<std::string> args;
        std::string named;
    };
    std::vector<Case> cases;
    for (const Crafted& c : crafted) {
        const fs::path p = tmp.path / c.name;
        std::ofstream(p, std::ios::binary) << c.bytes;
        cases.push_back({tokenize(p), p.string()});
    }
    // A Hugging Face folder's tokenizer.model goes the same way, and so does export-gguf's vocabulary.
    fs::create_directories(tmp.path / "hf");
    std::ofstream(tmp.path / "hf" / "tokenizer.model", std::ios::binary) << crafted[0].bytes;
    cases.push_back({tokenize(tmp.path / "hf"), (tmp.path / "hf" / "tokenizer.model").string()});
    cases.push_back({{"export-gguf", "-m", test::model_path("stories260K.bin"), "--tokenizer", cases[0].named, "--out",
                      (tmp.path / "out.gguf").string()},
                     cases[0].named});
    for (const auto& [args, named] : cases) {
        INFO(args[0] << " " << named);
        const test::ChildResult r = test::run_medusa_limited(args);
        CHECK(r.exit_code > 0);
        CHECK(r.exit_code < 128);  // an exit, not a signal
        CHECK_THAT(r.err, Catch::Contains(named + ": not a sentencepiece model: the normalization rules"));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}
