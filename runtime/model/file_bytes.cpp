#include "model/file_bytes.h"

#include <cerrno>
#include <cstdio>

namespace medusa {

std::shared_ptr<const std::vector<uint8_t>> read_file_bytes(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw FormatError(path + ": cannot open: " + std::strerror(errno));
    auto bytes = std::make_shared<std::vector<uint8_t>>();
    uint8_t buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes->insert(bytes->end(), buf, buf + n);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) throw FormatError(path + ": read error");
    return bytes;
}

void validate_config(const LlamaConfig& c, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": invalid model configuration: " + what); };
    auto in_range = [&](int v, int lo, int hi, const char* what) {
        if (v < lo || v > hi)
            bad(std::string(what) + " = " + std::to_string(v) + " (expected " + std::to_string(lo) + ".." +
                std::to_string(hi) + ")");
    };
    in_range(c.dim, 1, 65536, "dim");
    in_range(c.hidden_dim, 1, 262144, "hidden_dim");
    in_range(c.n_layers, 1, 1024, "n_layers");
    in_range(c.n_heads, 1, 1024, "n_heads");
    in_range(c.n_kv_heads, 1, c.n_heads, "n_kv_heads");
    in_range(c.vocab_size, 1, 1 << 22, "vocab_size");
    in_range(c.seq_len, 1, 1 << 20, "context length");
    if (c.dim % c.n_heads) bad("dim " + std::to_string(c.dim) + " is not a multiple of n_heads");
    if (c.n_heads % c.n_kv_heads) bad("n_heads is not a multiple of n_kv_heads");
    if (c.head_dim() % 2) bad("the head size must be even for RoPE");
    if (!(c.rms_eps > 0 && c.rms_eps < 1)) bad("rms epsilon out of range");
    if (!(c.rope_theta > 1)) bad("rope theta out of range");
    if (!(c.rope_position_scale >= 1 && c.rope_position_scale <= 1024)) bad("rope scaling factor out of range");
}

}  // namespace medusa
