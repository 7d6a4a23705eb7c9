// Broken sentencepiece vocabularies are refused at load, naming the file: a zero-length piece
// (sentencepiece's trie builder throws without a name) and an incomplete byte-fallback set (which
// loads, then fails on the first prompt that needs a missing byte).
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>

#include "model/model_file.h"
#include "model/tokenizer.h"
#include "test_paths.h"

using namespace medusa;
using Catch::Contains;

namespace {

// Just enough of the protobuf wire format to rewrite a ModelProto's pieces.
uint64_t get_varint(const std::string& s, size_t& i) {
    uint64_t v = 0;
    for (int shift = 0; i < s.size(); shift += 7) {
        const uint8_t b = uint8_t(s[i++]);
        v |= uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    return v;
}

void put_varint(std::string& out, uint64_t v) {
    do {
        out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

struct Field {
    uint64_t key;         // number << 3 | wire type
    std::string payload;  // a length-delimited field's content, or the raw bytes of the others
};

std::vector<Field> fields(const std::string& msg) {
    std::vector<Field> out;
    for (size_t i = 0; i < msg.size();) {
        Field f;
        f.key = get_varint(msg, i);
        const size_t start = i;
        switch (f.key & 7) {
            case 0: get_varint(msg, i); break;
            case 1: i += 8; break;
            case 5: i += 4; break;
            case 2: {
                const uint64_t n = get_varint(msg, i);
                f.payload = msg.substr(i, n);
                i += n;
                out.push_back(std::move(f));
                continue;
            }
            default: FAIL("unexpected wire type"); return out;
        }
        f.payload = msg.substr(start, i - start);
        out.push_back(std::move(f));
    }
    return out;
}

std::string encode(const std::vector<Field>& fs) {
    std::string out;
    for (const Field& f : fs) {
        put_varint(out, f.key);
        if ((f.key & 7) == 2) put_varint(out, f.payload.size());
        out += f.payload;
    }
    return out;
}

// tok512.model with `edit` applied to every piece (field 1: piece, field 3: type).
template <class Edit>
std::string edited_tok512(Edit edit) {
    std::ifstream in(test::model_path("tok512.model"), std::ios::binary);
    std::vector<Field> model = fields(std::string(std::istreambuf_iterator<char>(in), {}));
    int index = 0;
    for (Field& f : model) {
        if (f.key != ((1 << 3) | 2)) continue;
        std::vector<Field> piece = fields(f.payload);
        edit(index++, piece);
        f.payload = encode(piece);
    }
    return encode(model);
}

std::string piece_text(const std::vector<Field>& piece) {
    for (const Field& f : piece)
        if (f.key == ((1 << 3) | 2)) return f.payload;
    return "";
}

std::string load_error(const std::string& proto, const std::string& path) {
    std::ofstream(path, std::ios::binary) << proto;
    try {
        Tokenizer::from_file(path);
    } catch (const FormatError& e) {
        std::remove(path.c_str());
        return e.what();
    }
    std::remove(path.c_str());
    return "no error";
}

}  // namespace

TEST_CASE("a sentencepiece model with a zero-length piece is refused naming the file", "[tokenizer-errors]") {
    // The rewriter itself changes nothing when no piece is edited.
    const std::string same = edited_tok512([](int, std::vector<Field>&) {});
    CHECK(load_error(same, "/tmp/medusa-same.model") == "no error");
    const std::string proto = edited_tok512([](int i, std::vector<Field>& piece) {
        if (i == 300)
            for (Field& f : piece)
                if (f.key == ((1 << 3) | 2)) f.payload.clear();
    });
    const std::string path = "/tmp/medusa-empty-piece.model";
    const std::string msg = load_error(proto, path);
    CHECK_THAT(msg, Contains(path + ": not a sentencepiece model"));
    CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("a sentencepiece model missing some byte-fallback pieces is refused at load", "[tokenizer-errors]") {
    // <0x41> becomes an ordinary piece: 255 byte pieces are left.
    const std::string proto = edited_tok512([](int, std::vector<Field>& piece) {
        if (piece_text(piece) != "<0x41>") return;
        for (Field& f : piece)
            if (f.key == ((3 << 3) | 0)) f.payload = std::string(1, char(1));  // NORMAL
    });
    const std::string path = "/tmp/medusa-partial-bytes.model";
    CHECK_THAT(load_error(proto, path), Contains(path + ": not a sentencepiece model") && Contains("256 byte pieces"));
}

TEST_CASE("a GGUF vocabulary that cannot encode text is refused at load, not at the first prompt",
          "[tokenizer-errors]") {
    std::ifstream in(test::model_path("gguf/stories260K-f32.gguf"), std::ios::binary);
    std::string gguf(std::istreambuf_iterator<char>(in), {});
    // tokenizer.ggml.token_type: array type, element type, count, then one int32 per token.
    const std::string key = "tokenizer.ggml.token_type";
    const size_t types = gguf.find(key) + key.size() + 16;
    REQUIRE(types > key.size() + 16);
    const int32_t control = 3;
    for (size_t id = 259; id < 512; ++id) std::memcpy(&gguf[types + 4 * id], &control, 4);  // every merged piece
    const std::string path = "/tmp/medusa-all-control.gguf";
    CHECK_THAT(load_error(gguf, path), Contains(path + ": the vocabulary cannot encode text"));
}

// Found by fuzz/fuzz_gguf_spm_vocab.cpp: the load probe holds no 'q', so a vocabulary whose 'q' is a
// control piece loaded, then failed on the first text with a q in it.
TEST_CASE("a sentencepiece model with a one-letter control piece is refused at load, naming it", "[tokenizer-errors]") {
    const std::string proto = edited_tok512([](int, std::vector<Field>& piece) {
        if (piece_text(piece) == "q") piece.push_back({(3 << 3) | 0, std::string(1, char(3))});  // type: CONTROL
    });
    const std::string path = "/tmp/medusa-control-q.model";
    CHECK_THAT(load_error(proto, path), Contains(path + ": the vocabulary cannot encode text spelling its control piece") &&
                                            Contains("'q'"));
}
