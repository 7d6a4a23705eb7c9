// A tiny GGUF llama written in a test (1 layer, dim 8, a byte-fallback vocabulary with ChatML's
// control tokens), with or without tokenizer.chat_template: the chat-template paths of the loader,
// the CLI and the app run on it.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace medusa::test {

namespace tiny_gguf_detail {
namespace fs = std::filesystem;

// A minimal GGUF v3 writer: a 1-layer llama with dim 8, a byte-fallback vocabulary with ChatML's
// control tokens, and (when given) tokenizer.chat_template.
class GgufWriter {
public:
    void str(const std::string& s) {
        u64(s.size());
        bytes_.insert(bytes_.end(), s.begin(), s.end());
    }
    void u32(uint32_t v) { raw(&v, 4); }
    void i32(int32_t v) { raw(&v, 4); }
    void u64(uint64_t v) { raw(&v, 8); }
    void f32(float v) { raw(&v, 4); }
    void raw(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        bytes_.insert(bytes_.end(), b, b + n);
    }
    std::vector<uint8_t> bytes_;
};

constexpr uint32_t kU32 = 4, kI32 = 5, kF32 = 6, kString = 8, kArray = 9;

inline std::vector<std::string> tiny_vocab() {
    std::vector<std::string> v = {"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"};
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        v.push_back(buf);
    }
    return v;
}

// The usual ChatML template (e.g. teknium/OpenHermes-2.5-Mistral-7B's), as a GGUF file carries it.
inline const std::string kChatmlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// Written to the temporary folder as medusa-chat-<pid>-<name>.gguf; the caller removes it.
inline std::filesystem::path write_tiny_gguf(const std::string& name, const std::string* chat_template) {
    const int dim = 8, hidden = 16;
    const std::vector<std::string> vocab = tiny_vocab();
    GgufWriter w;
    w.u32(0x46554747);
    w.u32(3);
    struct T {
        std::string name;
        std::vector<uint64_t> dims;  // innermost first
    };
    std::vector<T> tensors = {{"token_embd.weight", {uint64_t(dim), vocab.size()}},
                              {"output_norm.weight", {uint64_t(dim)}},
                              {"blk.0.attn_norm.weight", {uint64_t(dim)}},
                              {"blk.0.attn_q.weight", {uint64_t(dim), uint64_t(dim)}},
                              {"blk.0.attn_k.weight", {uint64_t(dim), uint64_t(dim)}},
                              {"blk.0.attn_v.weight", {uint64_t(dim), uint64_t(dim)}},
                              {"blk.0.attn_output.weight", {uint64_t(dim), uint64_t(dim)}},
                              {"blk.0.ffn_norm.weight", {uint64_t(dim)}},
                              {"blk.0.ffn_gate.weight", {uint64_t(dim), uint64_t(hidden)}},
                              {"blk.0.ffn_down.weight", {uint64_t(hidden), uint64_t(dim)}},
                              {"blk.0.ffn_up.weight", {uint64_t(dim), uint64_t(hidden)}}};
    w.u64(tensors.size());
    w.u64(chat_template ? 11 : 10);
    auto key = [&](const char* k, uint32_t type) {
        w.str(k);
        w.u32(type);
    };
    key("general.architecture", kString), w.str("llama");
    key("llama.embedding_length", kU32), w.u32(dim);
    key("llama.feed_forward_length", kU32), w.u32(hidden);
    key("llama.block_count", kU32), w.u32(1);
    key("llama.attention.head_count", kU32), w.u32(2);
    key("llama.context_length", kU32), w.u32(64);
    key("tokenizer.ggml.model", kString), w.str("llama");
    key("tokenizer.ggml.tokens", kArray), w.u32(kString), w.u64(vocab.size());
    for (const auto& t : vocab) w.str(t);
    key("tokenizer.ggml.scores", kArray), w.u32(kF32), w.u64(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) w.f32(0.0f);
    key("tokenizer.ggml.token_type", kArray), w.u32(kI32), w.u64(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) w.i32(i == 0 ? 2 : i < 5 ? 3 : 6);  // unknown, control, byte
    if (chat_template) key("tokenizer.chat_template", kString), w.str(*chat_template);
    uint64_t offset = 0;
    std::vector<uint64_t> sizes;
    for (const T& t : tensors) {
        w.str(t.name);
        w.u32(uint32_t(t.dims.size()));
        uint64_t n = 1;
        for (uint64_t d : t.dims) w.u64(d), n *= d;
        w.u32(0);  // F32
        w.u64(offset);
        sizes.push_back(n * 4);
        offset += (n * 4 + 31) / 32 * 32;
    }
    while (w.bytes_.size() % 32) w.bytes_.push_back(0);
    for (uint64_t s : sizes) {
        for (uint64_t i = 0; i < s / 4; ++i) w.f32(0.01f * float(i % 7));
        while (w.bytes_.size() % 32) w.bytes_.push_back(0);
    }
    const fs::path p = fs::temp_directory_path() / ("medusa-chat-" + std::to_string(::getpid()) + "-" + name + ".gguf");
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(w.bytes_.data()), std::streamsize(w.bytes_.size()));
    return p;
}

}  // namespace tiny_gguf_detail

using tiny_gguf_detail::kChatmlTemplate;
using tiny_gguf_detail::write_tiny_gguf;

}  // namespace medusa::test
