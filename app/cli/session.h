// What every subcommand sets up from its flags: the model file, its tokenizer, the GPU.
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "args.h"
#include "decode/tree.h"
#include "gpu/context.h"
#include "llm/medusa_heads.h"
#include "model/atomic_file.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa::cli {

// -m FILE, or --synthetic NAME [--dtype TYPE] (any GGUF type: f32, f16, q4_k, ...)
ModelFile open_model(const Args& args);
// A GGUF type by its dtype_name() ("q4_k"); a usage error listing them otherwise.
DType parse_dtype(const std::string& name);
// --tokenizer FILE, else the vocabulary embedded in the model, else tok512.model / tokenizer.model
// beside the model file. Refuses a tokenizer whose vocabulary size differs from the model's.
Tokenizer open_tokenizer(const Args& args, const ModelFile& model);
// The same, or nothing when no tokenizer can be found.
std::optional<Tokenizer> try_open_tokenizer(const Args& args, const ModelFile& model);
// --heads FILE|DIR|init [--num-heads K] (default: init with as many heads as the tree is deep)
MedusaHeads open_heads(const Args& args, const ModelFile& model);
// --tree NAME|FILE|dense:W,..|chain:N (default: mc_sim_7b_63)
TreeBuffers open_tree(const Args& args);
// The output files these flags name (those given), checked before any work, so that minutes of
// decoding or measuring never end in "cannot write": throws naming the path (model/output_path.h).
void check_output_flags(const Args& args, std::initializer_list<const char*> file_flags);
// --trace FILE.jsonl: the file each step's trace is written to (null when the flag is absent); it
// appears, whole, when commit() is called after decoding. A path that cannot be written throws.
std::unique_ptr<AtomicFileWriter> open_trace(const Args& args);
// --device N, --validate. With `model`, a CPU driver runs a small model's shaders on the calling
// thread: for a few MB of weights, handing each dispatch to worker threads costs more than the
// parallel work brings (lavapipe: 0.6 vs 1.0 ms per stories260K token). LP_NUM_THREADS overrides.
std::unique_ptr<gpu::Context> open_gpu(const Args& args, const ModelFile* model = nullptr);

}  // namespace medusa::cli
