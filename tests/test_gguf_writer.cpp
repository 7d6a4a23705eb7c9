// export-gguf's writer: what it writes reads back as the model it was given, byte for byte, and
// matches what llama.cpp's own converter made of the same checkpoint (shared/models/gguf).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "config_checks.h"
#include "model/gguf_writer.h"
#include "model/load_model.h"
#include "model/synthetic_model.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::model_path;

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
    return a.nbytes == b.nbytes && std::memcmp(a.data, b.data, a.nbytes) == 0;
}

// Every tensor of `want` is in `got` under its name, with its type, shape and bytes.
void require_same_tensors(const ModelFile& want, const ModelFile& got) {
    REQUIRE(got.tensors.size() == want.tensors.size());
    for (const Tensor& w : want.tensors) {
        CAPTURE(w.name);
        const Tensor* g = got.find(w.name);
        REQUIRE(g);
        CHECK(g->type == w.type);
        CHECK(g->shape == w.shape);
        CHECK(same_bytes(*g, w));
    }
}

void require_same_config(const LlamaConfig& a, const LlamaConfig& b) {
    test::check_same_shapes(a, b);
    CHECK(a.rope_theta == b.rope_theta);
    CHECK(a.rms_eps == b.rms_eps);
}

}  // namespace

TEST_CASE("a llama2.c checkpoint written as GGUF reads back as the same model and vocabulary", "[gguf-writer]") {
    test::TempDir dir("gguf-writer");
    const std::string out = (dir.path / "stories260K.gguf").string();
    const ModelFile bin = load_model(model_path("stories260K.bin"));
    const Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
    size_t last_done = 0, last_total = 0;
    write_gguf(bin, tok, out, [&](size_t done, size_t total) { last_done = done, last_total = total; });
    CHECK(last_done == last_total);
    CHECK(last_total > 1'000'000);  // stories260K's F32 weights

    const ModelFile gguf = load_model(out);
    CHECK(gguf.format == ModelFormat::Gguf);
    require_same_config(bin.config, gguf.config);
    CHECK(gguf.config.tied_classifier == bin.config.tied_classifier);
    require_same_tensors(bin, gguf);

    REQUIRE_FALSE(gguf.embedded_tokenizer.empty());
    const Tokenizer embedded = Tokenizer::from_serialized(gguf.embedded_tokenizer, out);
    REQUIRE(embedded.vocab_size() == tok.vocab_size());
    for (int id = 0; id < tok.vocab_size(); ++id) {
        CAPTURE(id);
        CHECK(embedded.piece(id) == tok.piece(id));
        CHECK(embedded.score(id) == tok.score(id));
        CHECK(embedded.token_type(id) == tok.token_type(id));
    }
    // A GGUF "llama" vocabulary tokenizes as llama.cpp does, without sentencepiece's collapsing of
    // repeated spaces: these texts have none.
    for (const char* text : {"Once upon a time, there was a little girl named Lily.", "Zebras! 42 \xC3\xA9t\xC3\xA9s"})
        CHECK(embedded.encode(text, true) == tok.encode(text, true));
}

TEST_CASE("the written GGUF holds what llama.cpp's converter made of the same checkpoint", "[gguf-writer]") {
    // shared/models/gguf/stories260K-f32.gguf: convert-llama2c-to-ggml on stories260K.bin. Its
    // classifier is a copy of the embedding (untied); everything else must be the same bytes.
    test::TempDir dir("gguf-writer-ref");
    const std::string out = (dir.path / "stories260K.gguf").string();
    write_gguf(load_model(model_path("stories260K.bin")), Tokenizer::from_file(model_path("tok512.model")), out);
    const ModelFile ours = load_model(out);
    const ModelFile reference = load_model(model_path("gguf/stories260K-f32.gguf"));
    require_same_config(reference.config, ours.config);
    for (const Tensor& r : reference.tensors) {
        CAPTURE(r.name);
        const Tensor& o = ours.get(r.name == "output" ? "tok_embeddings" : r.name);
        CHECK(o.shape == r.shape);
        CHECK(same_bytes(o, r));
    }
    const Tokenizer a = Tokenizer::from_serialized(ours.embedded_tokenizer, out);
    const Tokenizer b = Tokenizer::from_serialized(reference.embedded_tokenizer, reference.path);
    REQUIRE(a.vocab_size() == b.vocab_size());
    for (int id = 0; id < a.vocab_size(); ++id) {
        CAPTURE(id);
        CHECK(a.piece(id) == b.piece(id));
    }
    CHECK(a.encode("The little dog ran to the park.", true) == b.encode("The little dog ran to the park.", true));
}

TEST_CASE("a synthetic quantized model written as GGUF reads back byte for byte", "[gguf-writer]") {
    test::TempDir dir("gguf-writer-synth");
    const Tokenizer tok = Tokenizer::from_file(model_path("llama2-tokenizer.model"));
    for (DType type : {DType::Q4_0, DType::Q8_0, DType::F16}) {
        CAPTURE(dtype_name(type));
        const ModelFile synthetic = make_synthetic_model("stories15m", type);
        const std::string out = (dir.path / (std::string(dtype_name(type)) + ".gguf")).string();
        write_gguf(synthetic, tok, out);
        const ModelFile gguf = load_model(out);
        require_same_config(synthetic.config, gguf.config);
        require_same_tensors(synthetic, gguf);
    }
}

TEST_CASE("what GGUF cannot hold is refused, naming it, and an existing file survives", "[gguf-writer]") {
    test::TempDir dir("gguf-writer-bad");
    const std::string out = (dir.path / "kept.gguf").string();
    std::ofstream(out) << "earlier contents";
    const Tokenizer tok512 = Tokenizer::from_file(model_path("tok512.model"));
    // llama2.c's grouped int8 has no GGUF type.
    CHECK_THROWS_WITH(write_gguf(load_model(model_path("stories260K_q80.bin")), tok512, out),
                      Catch::Contains("llama2.c groups") && Catch::Contains("stories260K_q80.bin"));
    // Rows that are not whole blocks: stories15m's 288 values typed as 256-value Q4_K super-blocks
    // (the synthetic generator itself refuses to make such a model).
    CHECK_THROWS_WITH(make_synthetic_model("stories15m", DType::Q4_K), Catch::Contains("288") && Catch::Contains("Q4_K"));
    ModelFile split_blocks = make_synthetic_model("stories15m", DType::Q8_0);
    split_blocks.tensors.back().type = DType::Q4_K;
    CHECK_THROWS_WITH(write_gguf(split_blocks, Tokenizer::from_file(model_path("llama2-tokenizer.model")), out),
                      Catch::Contains("288") && Catch::Contains("Q4_K") && Catch::Contains(split_blocks.tensors.back().name));
    // A vocabulary of another size.
    CHECK_THROWS_WITH(write_gguf(load_model(model_path("stories260K.bin")),
                                 Tokenizer::from_file(model_path("llama2-tokenizer.model")), out),
                      Catch::Contains("32000 pieces") && Catch::Contains("512"));
    CHECK(test::slurp(out) == "earlier contents");
}

TEST_CASE("medusa export-gguf writes a file whose greedy text is the checkpoint's", "[gguf-writer][cli]") {
    test::TempDir dir("gguf-writer-cli");
    const std::string out = (dir.path / "stories260K.gguf").string();
    const auto exported = test::run_medusa("export-gguf -m " + model_path("stories260K.bin") + " --out " + out);
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
    CHECK(exported.err.find("100%") != std::string::npos);
    const std::string generate = " -p 'Once upon a time' -n 40 --temp 0";
    const auto from_bin = test::run_medusa("generate -m " + model_path("stories260K.bin") + generate);
    const auto from_gguf = test::run_medusa("generate -m " + out + generate);
    INFO(from_bin.err << from_gguf.err);
    REQUIRE(from_bin.exit_code == 0);
    REQUIRE(from_gguf.exit_code == 0);
    CHECK(from_bin.out.find("little girl named Lily") != std::string::npos);
    CHECK(from_gguf.out == from_bin.out);
}
