#include "model/load_model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "model/gguf_metadata.h"
#include "model/hf_loader.h"
#include "model/llama2c_loader.h"

namespace medusa {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// By the first bytes: GGUF's magic (true), else llama2.c, which has none (false); a safetensors
// header or text is told apart and refused.
bool is_gguf(const std::vector<uint8_t>& head, const std::string& name) {
    if (head.size() >= 4 && std::memcmp(head.data(), "GGUF", 4) == 0) return true;
    // `{"` at offset 8 cannot start a llama2.c header: it would mean more than 8000 layers.
    if (head.size() >= 10 && head[8] == '{' && head[9] == '"')
        throw FormatError(name + ": looks like a safetensors file: load the Hugging Face model folder "
                                 "(config.json + model.safetensors) instead");
    // A llama2.c header's sizes are small integers, so it holds zero bytes; text has none.
    const size_t n = std::min<size_t>(head.size(), 28);
    const bool text = n > 0 && std::all_of(head.begin(), head.begin() + long(n), [](uint8_t c) {
        return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
    });
    if (text) throw FormatError(name + ": not a model file (no GGUF magic, and it begins with text where a llama2.c header would be)");
    return false;
}

}  // namespace

ModelFile load_model(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw FormatError(path + ": no such file or directory");
    // Hugging Face checkpoints are folders (config.json + shards) or need the config.json beside them.
    if (fs::is_directory(path, ec) || ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json"))
        return load_hf(path);
    // The header first, against the file's size, so that gigabytes behind a head that is no model
    // are never read: GGUF's header and tensor table (read as far as they go, and parsed once), a
    // llama2.c header and the exact size it implies.
    const FileHead head = read_file_head(path, 4096);
    if (is_gguf(head.bytes, path)) {
        GgufHeader header = read_gguf_header_of_file(path);
        return load_gguf(read_file_bytes(path), path, std::move(header));
    }
    check_llama2c_head(head, path);
    return load_llama2c(read_file_bytes(path), path);
}


ModelFile load_model_from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    if (!bytes) throw FormatError(name + ": no data");
    if (is_gguf(*bytes, name)) return load_gguf(std::move(bytes), name);
    return load_llama2c(std::move(bytes), name);
}

}  // namespace medusa
