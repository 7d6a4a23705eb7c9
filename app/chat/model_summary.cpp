#include "model_summary.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>

#include "model/chat_template.h"
#include "model/load_model.h"
#include "model/model_file.h"

namespace medusa::chat {

namespace {

std::string size_text(uintmax_t bytes) {
    char b[32];
    if (bytes >= (uintmax_t(1) << 30)) std::snprintf(b, sizeof b, "%.1f GB", double(bytes) / double(1 << 30));
    else std::snprintf(b, sizeof b, "%.1f MB", double(bytes) / double(1 << 20));
    return b;
}

// The type most of the weights' bytes are stored in.
std::string weight_type(const ModelFile& f) {
    std::map<DType, size_t> bytes;
    for (const Tensor& t : f.tensors) bytes[t.type] += t.nbytes;
    DType best = DType::F32;
    size_t most = 0;
    for (const auto& [type, n] : bytes)
        if (n > most) most = n, best = type;
    std::string name = dtype_name(best);  // as llama.cpp writes them: Q8_0, F16
    for (char& ch : name) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    return name;
}

}  // namespace

std::string model_summary(const std::string& path) {
    try {
        const ModelFile f = load_model(path);
        const LlamaConfig& c = f.config;
        std::error_code ec;
        uintmax_t size = 0;
        if (std::filesystem::is_directory(path, ec)) {
            for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec))
                if (e.is_regular_file(ec)) size += e.file_size(ec);
        } else {
            size = std::filesystem::file_size(path, ec);
        }
        const ChatTemplateDetection chat = detect_chat_template(f);
        return std::filesystem::path(path).filename().string() + ": " + format_name(f.format) + ", " +
               family_name(c.arch.family) + ", " + std::to_string(c.n_layers) +
               " layers, dim " + std::to_string(c.dim) + ", vocab " + std::to_string(c.vocab_size) + ", context " +
               std::to_string(c.seq_len) + ", " + weight_type(f) + " weights, " + size_text(size) + ", " +
               (chat.kind == ChatTemplate::None ? std::string("no chat template (continues text)")
                                                : std::string("chat template ") + chat_template_name(chat.kind));
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace medusa::chat
