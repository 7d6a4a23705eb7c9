#include "session.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "llm/medusa_heads_io.h"
#include "model/load_model.h"
#include "setup/decoding_spec.h"
#include "model/block_format.h"
#include "model/output_path.h"
#include "terminal_text.h"
#include "model/synthetic_model.h"

namespace medusa::cli {

namespace fs = std::filesystem;

DType parse_dtype(const std::string& name) {
    if (const BlockFormat* f = gguf_format_by_name(name)) return f->type;
    std::string known;
    for (const BlockFormat& f : gguf_formats()) known += (known.empty() ? "" : ", ") + std::string(dtype_name(f.type));
    throw UsageError("--dtype must be one of " + known + ", not '" + name + "'");
}

ModelFile open_model(const Args& args) {
    if (args.has("--synthetic")) {
        return make_synthetic_model(args.str("--synthetic"), parse_dtype(args.str("--dtype", "q8_0")));
    }
    if (!args.has("--model")) throw UsageError("no model: pass -m FILE (e.g. ../shared/models/stories260K.bin)");
    return load_model(args.str("--model"));
}

Tokenizer open_tokenizer(const Args& args, const ModelFile& model) {
    std::optional<Tokenizer> tok;
    std::string source;
    if (args.has("--tokenizer")) {
        source = args.str("--tokenizer");
        tok = Tokenizer::from_file(source);
    } else if (!model.embedded_tokenizer.empty()) {
        source = model.path + " (embedded vocabulary)";
        tok = Tokenizer::from_serialized(model.embedded_tokenizer, source);
    } else {
        const fs::path dir = fs::path(model.path).parent_path();
        for (const char* name : {"tok512.model", "tokenizer.model", "llama2-tokenizer.model"}) {
            const fs::path candidate = dir / name;
            if (!fs::exists(candidate)) continue;
            Tokenizer t = Tokenizer::from_file(candidate.string());
            if (t.vocab_size() == model.config.vocab_size) {
                source = candidate.string();
                tok = std::move(t);
                break;
            }
        }
        if (!tok)
            throw UsageError(model.path + " has no embedded vocabulary and no matching tokenizer was found beside it: "
                             "pass --tokenizer FILE (a sentencepiece .model)");
    }
    if (tok->vocab_size() != model.config.vocab_size)
        throw FormatError(source + ": tokenizer has " + std::to_string(tok->vocab_size()) + " pieces but " +
                          model.path + " has a vocabulary of " + std::to_string(model.config.vocab_size));
    return std::move(*tok);
}

std::optional<Tokenizer> try_open_tokenizer(const Args& args, const ModelFile& model) {
    try {
        return open_tokenizer(args, model);
    } catch (const UsageError&) {
        return std::nullopt;
    }
}

void check_output_flags(const Args& args, std::initializer_list<const char*> file_flags) {
    for (const char* flag : file_flags)
        if (args.has(flag)) check_output_path(args.str(flag));
}

std::unique_ptr<AtomicFileWriter> open_trace(const Args& args) {
    if (!args.has("--trace")) return nullptr;
    return std::make_unique<AtomicFileWriter>(args.str("--trace"));  // appears when decoding ends
}

std::unique_ptr<gpu::Context> open_gpu(const Args& args, const ModelFile* model) {
    gpu::ContextOptions o;
    o.device = args.integer("--device", -1);
    o.validation = args.has("--validate");
    if (model) {
        size_t bytes = 0;
        for (const Tensor& t : model->tensors) bytes += t.nbytes;
        if (bytes < (size_t(16) << 20)) o.cpu_driver_threads = 0;
    }
    return std::make_unique<gpu::Context>(o);
}

}  // namespace medusa::cli

namespace medusa::cli {

TreeBuffers open_tree(const Args& args) {
    try {
        return build_tree_buffers(load_tree(args.str("--tree", "mc_sim_7b_63")));
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

MedusaHeads open_heads(const Args& args, const ModelFile& model) {
    const HeadsPath path = parse_heads_word(args.str("--heads", heads_word(std::nullopt)));
    const int depth = build_tree_buffers(load_tree(args.str("--tree", "mc_sim_7b_63"))).max_depth;
    if (!path) return MedusaHeads::init_from_model(model, args.integer("--num-heads", std::max(1, depth)));
    MedusaHeads heads = load_medusa_heads(*path, model.config);
    if (const std::string note = heads.non_finite_note(); !note.empty())
        std::fprintf(stderr, "warning: %s\n", terminal_safe(note).c_str());
    return heads;
}

}  // namespace medusa::cli
