// Hostile input files through the CLI: each one, made here from the real model files, must end
// with a non-zero exit, one line on stderr naming the file, no crash, no hang and bounded memory.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "cli_rusage.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
namespace fs = std::filesystem;
using medusa::test::TempDir;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return Bytes(std::istreambuf_iterator<char>(f), {});
}

void write_all(const fs::path& path, const Bytes& b) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

void write_text(const fs::path& path, const std::string& s) { std::ofstream(path, std::ios::binary) << s; }

Bytes cut(const Bytes& b, size_t n) { return Bytes(b.begin(), b.begin() + long(std::min(n, b.size()))); }

template <class T>
Bytes put(Bytes b, size_t at, T v) {
    REQUIRE(at + sizeof(T) <= b.size());
    std::memcpy(&b[at], &v, sizeof(T));
    return b;
}

size_t find(const Bytes& b, const std::string& s) {
    auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
    REQUIRE(it != b.end());
    return size_t(it - b.begin());
}

struct Case {
    std::string what;
    std::vector<std::string> args;
    std::string file;  // what the message must name
};

std::vector<Case> make_cases(const fs::path& dir) {
    std::vector<Case> cases;
    auto model_case = [&](const std::string& what, const std::string& name, const Bytes& bytes) {
        const fs::path p = dir / name;
        write_all(p, bytes);
        cases.push_back({what, {"info", "-m", p.string()}, p.string()});
    };
    const Bytes l2c = read_all(model_path("stories260K.bin"));
    const Bytes q80 = read_all(model_path("stories260K_q80.bin"));
    const Bytes gguf = read_all(model_path("gguf/stories260K-f32.gguf"));
    const Bytes spm = read_all(model_path("tok512.model"));

    // llama2.c: truncations and absurd header fields.
    for (size_t n : {size_t(0), size_t(13), size_t(28), l2c.size() / 2, l2c.size() - 1})
        model_case("llama2.c cut at " + std::to_string(n), "l2c-cut-" + std::to_string(n) + ".bin", cut(l2c, n));
    model_case("llama2.c dim 2^31-1", "l2c-dim.bin", put<int32_t>(l2c, 0, std::numeric_limits<int32_t>::max()));
    model_case("llama2.c 10^9 layers", "l2c-layers.bin", put<int32_t>(l2c, 8, 1000000000));
    model_case("llama2.c vocab INT_MIN", "l2c-vocab.bin", put<int32_t>(l2c, 20, std::numeric_limits<int32_t>::min()));
    model_case("llama2.c context 2^30", "l2c-ctx.bin", put<int32_t>(l2c, 24, 1 << 30));
    model_case("llama2.c v2 group size 0", "q80-group0.bin", put<int32_t>(q80, 37, 0));
    model_case("llama2.c v2 cut in the header", "q80-cut.bin", cut(q80, 100));
    model_case("llama2.c v2 cut after the header", "q80-cut-300.bin", cut(q80, 300));

    // GGUF: truncations, absurd counts and lengths, offsets past the end, NaN hyper-parameters.
    for (size_t n : {size_t(4), size_t(20), size_t(70), size_t(5000), gguf.size() / 2, gguf.size() - 1})
        model_case("GGUF cut at " + std::to_string(n), "gguf-cut-" + std::to_string(n) + ".gguf", cut(gguf, n));
    model_case("GGUF version 99", "gguf-v99.gguf", put<uint32_t>(gguf, 4, 99));
    model_case("GGUF 2^62 tensors", "gguf-tensors.gguf", put<uint64_t>(gguf, 8, uint64_t(1) << 62));
    model_case("GGUF 2^62 keys", "gguf-keys.gguf", put<uint64_t>(gguf, 16, uint64_t(1) << 62));
    model_case("GGUF key length 2^60", "gguf-keylen.gguf", put<uint64_t>(gguf, 24, uint64_t(1) << 60));
    model_case("GGUF 2^40 vocabulary strings", "gguf-arraylen.gguf", put<uint64_t>(gguf, 61, uint64_t(1) << 40));
    const size_t emb = find(gguf, "token_embd.weight") + 17;  // then n_dims, dims, type, offset
    model_case("GGUF 1000 dimensions", "gguf-ndims.gguf", put<uint32_t>(gguf, emb, 1000));
    model_case("GGUF dimension 2^40", "gguf-dim.gguf", put<uint64_t>(gguf, emb + 4, uint64_t(1) << 40));
    model_case("GGUF tensor type 1000", "gguf-type.gguf", put<uint32_t>(gguf, emb + 20, 1000));
    model_case("GGUF offset past the end", "gguf-offset.gguf", put<uint64_t>(gguf, emb + 24, uint64_t(1) << 50));
    const size_t eps = find(gguf, "layer_norm_rms_epsilon") + 22 + 4;  // after the value type
    model_case("GGUF NaN rms epsilon", "gguf-nan-eps.gguf", put<float>(gguf, eps, std::nanf("")));
    const size_t ctx = find(gguf, "context_length") + 14 + 4;
    model_case("GGUF context length 2^32-1", "gguf-ctx.gguf", put<uint32_t>(gguf, ctx, 0xffffffffu));

    // Hugging Face folders: a hostile safetensors file or config.json beside a sane one.
    const std::string config =
        R"({"hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 5, "num_attention_heads": 8,
            "num_key_value_heads": 4, "vocab_size": 512, "max_position_embeddings": 512})";
    auto hf_case = [&](const std::string& what, const std::string& name, const std::string& cfg,
                       const std::string& header, uint64_t header_len, const std::string& names) {
        const fs::path d = dir / name;
        fs::create_directories(d);
        write_text(d / "config.json", cfg);
        Bytes st(8);
        if (header_len == 0) header_len = header.size();  // 0: the true length
        std::memcpy(st.data(), &header_len, 8);
        st.insert(st.end(), header.begin(), header.end());
        write_all(d / "model.safetensors", st);
        cases.push_back({what, {"info", "-m", d.string()}, names == "config.json" ? d.string() + ": config.json"
                                                                               : (d / names).string()});
    };
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    hf_case("safetensors header length 2^60", "hf-len", config, "{}", uint64_t(1) << 60, "model.safetensors");
    hf_case("safetensors offsets past the end", "hf-off", config,
            R"({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1048576]}})", 0, "model.safetensors");
    hf_case("safetensors header longer than the file", "hf-short", config, "{\"x\": 1}", 1000,
            "model.safetensors");
    hf_case("safetensors header nested 100,000 deep", "hf-deep", config, deep, 0, "model.safetensors");
    hf_case("config.json nested 100,000 deep", "hf-deep-config", deep, "{}", 0, "config.json");
    hf_case("config.json hidden_size 1e300", "hf-1e300", R"({"hidden_size": 1e300})", "{}", 0, "config.json");
    hf_case("config.json hidden_size a string", "hf-string", R"({"hidden_size": "64"})", "{}", 0, "config.json");

    // Not regular files: a folder, FIFOs, a device, a link to a FIFO.
    const fs::path fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    fs::create_symlink(fifo, dir / "fifo-link.bin");
    fs::create_directories(dir / "empty-dir");
    cases.push_back({"FIFO as model", {"info", "-m", fifo.string()}, fifo.string()});
    cases.push_back({"link to a FIFO as model", {"info", "-m", (dir / "fifo-link.bin").string()},
                     (dir / "fifo-link.bin").string()});
    cases.push_back({"/dev/zero as model", {"info", "-m", "/dev/zero"}, "/dev/zero"});
    cases.push_back({"empty folder as model", {"info", "-m", (dir / "empty-dir").string()}, (dir / "empty-dir").string()});
    cases.push_back({"FIFO as tokenizer", {"tokenize", "--tokenizer", fifo.string(), "-p", "hi"}, fifo.string()});
    cases.push_back({"/dev/zero as tokenizer", {"tokenize", "--tokenizer", "/dev/zero", "-p", "hi"}, "/dev/zero"});
    cases.push_back({"FIFO as tokenize -m", {"tokenize", "-m", fifo.string(), "-p", "hi"}, fifo.string()});
    cases.push_back({"empty folder as tokenizer", {"tokenize", "--tokenizer", (dir / "empty-dir").string(), "-p", "hi"},
                     (dir / "empty-dir").string()});
    cases.push_back({"FIFO as tree", {"tree", fifo.string()}, fifo.string()});
    cases.push_back({"/dev/zero as tokenize --file", {"tokenize", "-m", model_path("gguf/stories260K-f32.gguf"), "--file",
                                                       "/dev/zero"}, "/dev/zero"});

    // A Hugging Face folder's tokenizer.json: nested too deep, or a FIFO.
    fs::create_directories(dir / "tok-deep");
    write_text(dir / "tok-deep" / "tokenizer.json", deep);
    cases.push_back({"tokenizer.json nested 100,000 deep",
                     {"tokenize", "--tokenizer", (dir / "tok-deep").string(), "-p", "hi"},
                     (dir / "tok-deep" / "tokenizer.json").string()});
    fs::create_directories(dir / "tok-fifo");
    REQUIRE(::mkfifo((dir / "tok-fifo" / "tokenizer.json").c_str(), 0600) == 0);
    cases.push_back({"tokenizer.json a FIFO", {"tokenize", "--tokenizer", (dir / "tok-fifo").string(), "-p", "hi"},
                     (dir / "tok-fifo" / "tokenizer.json").string()});

    // Tokenizers and trees.
    for (size_t n : {size_t(1), spm.size() / 2}) {
        const fs::path p = dir / ("spm-cut-" + std::to_string(n) + ".model");
        write_all(p, cut(spm, n));
        cases.push_back({"sentencepiece cut at " + std::to_string(n), {"tokenize", "--tokenizer", p.string(), "-p", "hi"},
                         p.string()});
    }
    auto tree_case = [&](const std::string& what, const std::string& name, const std::string& text) {
        const fs::path p = dir / name;
        write_text(p, text);
        cases.push_back({what, {"tree", p.string()}, p.string()});
    };
    tree_case("tree nested 100,000 deep", "deep.json", deep);
    tree_case("tree object nested 100,000 deep", "deep-obj.json",
              "{\"medusa_choices\": " + deep + "}");
    tree_case("tree path nested 600 deep", "deep600.json",
              std::string("[") + std::string(600, '[') + std::string(600, ']') + "]");
    tree_case("tree rank 1e300", "rank.json", "[[0], [1e300]]");
    tree_case("tree rank a string", "rank-str.json", "[[0], [\"1\"]]");
    tree_case("tree truncated", "cut.json", "[[0], [0, ");
    tree_case("tree file of 65 MiB", "huge.json", "[[0]]");
    fs::resize_file(dir / "huge.json", 65u << 20);  // sparse: refused by its size before any read
    // 32 MB of real paths: parsed, JSON would take some 35 times that before the node limit applies.
    std::string paths = "[[0]";
    for (int i = 0; paths.size() < (32u << 20); ++i) paths += ", [" + std::to_string(i % 3) + ", " + std::to_string(i % 7) + "]";
    tree_case("tree of 32 MB of paths", "paths.json", paths + "]");

    // Files of gigabytes (sparse: no disk is used) behind a first few bytes that are no model, or a
    // header that does not describe them: refused from the head, not after reading it all.
    const fs::path zeros = dir / "zeros.bin";
    write_all(zeros, {});
    fs::resize_file(zeros, uint64_t(3) << 30);
    cases.push_back({"3 GiB of zeros as model", {"info", "-m", zeros.string()}, zeros.string()});
    const fs::path padded = dir / "l2c-padded.bin";
    write_all(padded, l2c);
    fs::resize_file(padded, uint64_t(3) << 30);
    cases.push_back({"llama2.c checkpoint followed by 3 GiB", {"info", "-m", padded.string()}, padded.string()});
    // A GGUF vocabulary of two million one-byte tokens: 18 MB of file, hundreds of MB as strings.
    Bytes vocab = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
    auto u32 = [&](uint32_t v) { vocab.insert(vocab.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); };
    auto u64 = [&](uint64_t v) { vocab.insert(vocab.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8); };
    auto str = [&](const std::string& t) { u64(t.size()), vocab.insert(vocab.end(), t.begin(), t.end()); };
    u64(0), u64(2);  // no tensors, two keys
    str("tokenizer.ggml.model"), u32(8), str("llama");
    str("tokenizer.ggml.tokens"), u32(9), u32(8), u64(2'000'000);
    for (int i = 0; i < 2'000'000; ++i) u64(1), vocab.push_back(uint8_t('a' + i % 26));
    const fs::path big_vocab = dir / "vocab-2m.gguf";
    write_all(big_vocab, vocab);
    cases.push_back({"GGUF vocabulary of 2 million tokens", {"tokenize", "--tokenizer", big_vocab.string(), "-p", "hi"},
                     big_vocab.string()});
    // Medusa heads of 50 GB: a valid header, then nothing the header describes.
    const fs::path heads = dir / "heads.safetensors";
    const std::string header = R"({"0.0.linear.weight": {"dtype": "F32", "shape": [64, 64], "data_offsets": [0, 16384]}})";
    Bytes st(8);
    const uint64_t header_len = header.size();
    std::memcpy(st.data(), &header_len, 8);
    st.insert(st.end(), header.begin(), header.end());
    write_all(heads, st);
    fs::resize_file(heads, uint64_t(50) << 30);
    cases.push_back({"Medusa heads file of 50 GB",
                     {"export-heads", "-m", model_path("stories260K.bin"), "--heads", heads.string(), "--out",
                      (dir / "heads-out").string()},
                     heads.string()});
    return cases;
}

}  // namespace

TEST_CASE("hostile files give one line naming the file, a non-zero exit and bounded memory", "[hostile-files]") {
    TempDir tmp("medusa-hostile");
    const std::vector<Case> cases = make_cases(tmp.path);
    REQUIRE(cases.size() == 62);
    // Memory is bounded relative to a valid model's run: sanitizer builds start several hundred
    // MB higher (shadow memory, the preloaded driver), and a hostile file must add little to it.
    // Memory is bounded by what the same command takes on a valid file of the kind, plus 32 MB:
    // the most a hostile file of these may make the program hold is a 1 MiB tree JSON, parsed.
    // (Sanitizer builds start several hundred MB higher, shadow memory and the preloaded driver,
    // which the baselines include.)
    // Each command's baseline, on a valid file of the kind its hostile cases give it.
    const std::map<std::string, std::vector<std::string>> valid = {
        {"info", {"info", "-m", model_path("stories260K.bin")}},
        {"tokenize", {"tokenize", "--tokenizer", model_path("llama2-tokenizer.model"), "-p", "hi"}},
        {"tree", {"tree", "mc_sim_7b_63"}},
        {"export-heads", {"export-heads", "-m", model_path("stories260K.bin"), "--heads", "init", "--out",
                          (tmp.path / "valid-heads").string()}}};
    std::map<std::string, long> baseline_kb;
    for (const auto& [command, args] : valid) {
        const auto r = medusa::test::run_medusa_limited(args);
        REQUIRE(r.exit_code == 0);
        baseline_kb[command] = r.max_rss_kb;
    }
    for (const Case& c : cases) {
        CAPTURE(c.what);
        const auto r = medusa::test::run_medusa_limited(c.args);
        CAPTURE(r.err, r.exit_code);
        CHECK(r.exit_code > 0);
        CHECK(r.exit_code < 128);  // not killed by a signal (a crash, or the time limit)
        CHECK(r.err.find(c.file) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        const long valid_kb = baseline_kb.at(c.args[0]);
        CAPTURE(r.max_rss_kb, valid_kb);
        CHECK(r.max_rss_kb < valid_kb + 32 * 1024);
    }
}
