#include "file_kind.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "decode/tree.h"
#include "model/gguf_metadata.h"
#include "model/json_file.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/safetensors_file.h"
#include "model/tokenizer.h"

namespace medusa::chat {

namespace fs = std::filesystem;
using nlohmann::json;

const char* file_kind_name(FileKind k) {
    switch (k) {
        case FileKind::Model: return "model";
        case FileKind::Tokenizer: return "tokenizer";
        case FileKind::MedusaHeads: return "Medusa heads";
        case FileKind::EagleLayer: return "EAGLE layer";
        case FileKind::Tree: return "tree";
        case FileKind::Benchmark: return "benchmark";
        case FileKind::Unknown: break;
    }
    return "unknown";
}

namespace {

std::string head_bytes(const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string s(n, '\0');
    in.read(s.data(), std::streamsize(n));
    s.resize(size_t(in.gcount()));
    return s;
}

// null when unreadable: too large, too deep, malformed or not a regular file.
json read_json(const fs::path& p) {
    try {
        return read_json_file(p.string());
    } catch (const std::exception&) {
        return json();
    }
}

// A safetensors file by its tensor names.
FileKind classify_safetensors(const std::string& path) {
    try {
        const SafetensorsFile f = SafetensorsFile::open(path);
        if (f.find("fc.weight") || f.find("midlayer.hidden_norm.weight")) return FileKind::EagleLayer;  // EAGLE-1/2/3
        for (const Tensor& t : f.tensors()) {
            const std::string& n = t.name;
            if (n.rfind("medusa_head.", 0) == 0 || n.find(".linear.weight") != std::string::npos) return FileKind::MedusaHeads;
            if (n.find("embed_tokens") != std::string::npos || n.find("layers.") != std::string::npos) return FileKind::Model;
        }
    } catch (const std::exception&) {
    }
    return FileKind::Unknown;
}

// A GGUF is a model, unless llama.cpp's architecture says it is an EAGLE-3 draft.
FileKind classify_gguf(const std::string& path) {
    try {
        if (read_gguf_header_of_file(path).meta.text("general.architecture") == "eagle3") return FileKind::EagleLayer;
    } catch (const std::exception&) {
    }
    return FileKind::Model;
}

FileKind classify_folder(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "medusa_lm_head.safetensors", ec) || fs::is_regular_file(dir / "medusa_lm_head.pt", ec))
        return FileKind::MedusaHeads;
    const json config = fs::is_regular_file(dir / "config.json", ec) ? read_json(dir / "config.json") : json();
    if (config.is_object() && config.contains("medusa_num_heads")) return FileKind::MedusaHeads;
    if (fs::is_regular_file(dir / "model.safetensors", ec)) {
        const FileKind k = classify_safetensors((dir / "model.safetensors").string());
        if (k != FileKind::Unknown) return k;
    }
    if (config.is_object() && config.contains("hidden_size")) return FileKind::Model;  // a sharded HF folder
    return FileKind::Unknown;
}

}  // namespace

FileKind classify_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return classify_folder(path);
    if (!fs::is_regular_file(path, ec)) return FileKind::Unknown;
    const std::string head = head_bytes(path, 16);
    if (head.rfind("GGUF", 0) == 0) return classify_gguf(path);
    if (head.rfind("ak42", 0) == 0) return FileKind::Model;
    // safetensors: an 8-byte header length, then a JSON object.
    if (head.size() >= 9 && head[8] == '{') return classify_safetensors(path);
    // JSON: a tree (a list of rank paths, or an object holding one) or a tokenizer.json.
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (head[first] == '[' || head[first] == '{')) {
        const json j = read_json(path);
        if (j.is_object() && j.contains("model") && j.contains("added_tokens")) return FileKind::Tokenizer;
        if (j.is_object() && j.contains("device") && (j.contains("compare") || j.contains("vulkan")))
            return FileKind::Benchmark;
        try {
            read_tree_file(path);
            return FileKind::Tree;
        } catch (const std::exception&) {
            return FileKind::Unknown;
        }
    }
    // A serialized sentencepiece model (a protobuf whose first field is the piece list).
    if (!head.empty() && head[0] == 0x0a) {
        try {
            Tokenizer::from_file(path);
            return FileKind::Tokenizer;
        } catch (const std::exception&) {
        }
    }
    // llama2.c v0 has no magic: it is a model when the loader takes it.
    try {
        load_model(path);
        return FileKind::Model;
    } catch (const std::exception&) {
    }
    return FileKind::Unknown;
}

}  // namespace medusa::chat
