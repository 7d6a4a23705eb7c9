#include "llm/eagle3_gguf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "llm/matrix_views.h"
#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "model/gguf_metadata.h"

namespace medusa {

namespace {

constexpr uint32_t kGgmlI64 = 27;  // GGML_TYPE_I64, d2t's type
constexpr int kExtractedLayers = 3;  // llama.cpp's eagle3 fuses exactly three
const std::string kFeatureNorm = "enc.output_norm.weight";  // norm_before_fc's gains

bool is_integer_type(uint32_t t) {
    return t == U8 || t == I8 || t == U16 || t == I16 || t == U32 || t == I32 || t == U64 || t == I64;
}

const char* value_type_name(uint32_t t) {
    switch (t) {
        case BOOL: return "BOOL";
        case F32: return "FLOAT32";
        case F64: return "FLOAT64";
        case STRING: return "STRING";
        default: return "an unknown type";
    }
}

std::string layers_text(const std::vector<int>& layers) {
    std::string s;
    for (int l : layers) s += (s.empty() ? "" : ", ") + std::to_string(l);
    return s;
}

// The parsed file: its bytes, header and tensors by name.
struct GgufDraft {
    std::string file;
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    GgufHeader header;
    std::map<std::string, const GgufTensorInfo*> tensors;

    const GgufTensorInfo* find(const std::string& name) const {
        const auto it = tensors.find(name);
        return it == tensors.end() ? nullptr : it->second;
    }
    std::vector<int64_t> shape(const GgufTensorInfo& info) const {
        std::vector<int64_t> s;
        for (auto it = info.dims.rbegin(); it != info.dims.rend(); ++it) s.push_back(int64_t(*it));
        return s;
    }
    std::vector<float> read(const std::string& name, const std::vector<int64_t>& want) const {
        const GgufTensorInfo* info = find(name);
        if (!info) throw FormatError(file + ": tensor '" + name + "' is missing");
        if (shape(*info) != want)
            throw FormatError(file + ": tensor '" + name + "' has shape " + shape_text(shape(*info)) + ", expected " +
                              shape_text(want));
        return dequantize(gguf_tensor(header, *bytes, *info, file));
    }
    int count(const std::string& key, int fallback, bool required) const {
        const int v = header.meta.integer(key, fallback, required);
        if (v < 1 || v > (1 << 20))
            throw FormatError(file + ": metadata key '" + key + "' = " + std::to_string(v) + " is out of range");
        return v;
    }
};

// The shape in the metadata, checked against the target as SafeAILab's config.json is.
EagleLayer layer_of_metadata(const GgufDraft& g, const LlamaConfig& target) {
    const GgufMetadata& meta = g.header.meta;
    const std::string arch = meta.text("general.architecture");
    if (arch != "eagle3")
        throw FormatError(g.file + ": architecture '" + arch + "' is not an EAGLE-3 draft (llama.cpp writes those as 'eagle3')");
    const std::string k = "eagle3.";
    EagleLayer e;
    e.version = EagleVersion::Eagle3;
    e.source = g.file;
    e.dim = g.count(k + "embedding_length", 0, true);
    e.hidden_dim = g.count(k + "feed_forward_length", 0, true);
    e.n_heads = g.count(k + "attention.head_count", 0, true);
    e.n_kv_heads = g.count(k + "attention.head_count_kv", e.n_heads, false);
    // A Qwen3 target's drafter keeps its head_dim, which is not embedding_length / heads.
    if (meta.has(k + "attention.key_length")) {
        e.head_size = g.count(k + "attention.key_length", 0, true);
        if (meta.has(k + "attention.value_length") && g.count(k + "attention.value_length", 0, true) != e.head_size)
            throw FormatError(g.file + ": " + k + "attention.value_length differs from key_length (heads whose keys and "
                              "values differ in size are not supported)");
        if (e.head_size * e.n_heads == e.dim) e.head_size = 0;
    }
    e.rms_eps = meta.real(k + "attention.layer_norm_rms_epsilon", 1e-6);
    e.rope_theta = meta.real(k + "rope.freq_base", 10000.0);
    if (!(e.rms_eps > 0.0f && e.rms_eps < 1.0f))
        throw FormatError(g.file + ": " + k + "attention.layer_norm_rms_epsilon is out of range (above 0 and below 1)");
    if (!(e.rope_theta > 1.0f)) throw FormatError(g.file + ": " + k + "rope.freq_base is out of range (above 1)");
    if (g.count(k + "block_count", 1, false) != 1)
        throw FormatError(g.file + ": " + k + "block_count is not 1 (an EAGLE-3 draft has one decoder layer)");
    if (const std::string s = meta.text(k + "rope.scaling.type"); s == "linear")
        e.rope_position_scale = meta.real(k + "rope.scaling.factor", 1.0);
    else if (!s.empty() && s != "none")
        throw FormatError(g.file + ": RoPE scaling '" + s + "' in the draft layer is not supported (none, linear and rope_freqs are)");
    if (meta.boolean(k + "norm_before_residual", false))
        throw FormatError(g.file + ": " + k + "norm_before_residual (a normed residual, RedHat's speculators' variant) is not supported");
    if (e.dim != target.dim)
        throw FormatError(g.file + ": the EAGLE-3 draft has hidden size " + std::to_string(e.dim) +
                          " but the target model has " + std::to_string(target.dim));
    if (meta.has(k + "target_hidden_size") && g.count(k + "target_hidden_size", 0, true) != target.dim)
        throw FormatError(g.file + ": " + k + "target_hidden_size " + std::to_string(meta.integer(k + "target_hidden_size", 0, true)) +
                          " is not the target model's hidden size " + std::to_string(target.dim));
    if (meta.has(k + "vocab_size") && g.count(k + "vocab_size", 0, true) != target.vocab_size)
        throw FormatError(g.file + ": " + k + "vocab_size " + std::to_string(meta.integer(k + "vocab_size", 0, true)) +
                          " is not the target model's vocabulary of " + std::to_string(target.vocab_size));
    if ((e.head_size == 0 && e.dim % e.n_heads != 0) || e.n_heads % e.n_kv_heads != 0 || e.head_dim() % 2 != 0 ||
        e.head_dim() > 1024)
        throw FormatError(g.file + ": hidden size " + std::to_string(e.dim) + " does not split into " +
                          std::to_string(e.n_heads) + " heads of an even size and " + std::to_string(e.n_kv_heads) +
                          " kv heads");
    if (meta.integer(k + "rope.dimension_count", e.head_dim(), false) != e.head_dim())
        throw FormatError(g.file + ": " + k + "rope.dimension_count differs from the head size " + std::to_string(e.head_dim()) +
                          " (partial RoPE is not supported)");
    return e;
}

// The three target layers, each inside the target: eagle3.target_layers, as llama.cpp's converter
// writes them now, or eagle3.extract_layers, the name older converters gave them.
std::vector<int> listed_layers(const GgufDraft& g, const LlamaConfig& target) {
    std::string key = "eagle3.target_layers";
    if (!g.header.meta.has(key) && g.header.meta.has("eagle3.extract_layers")) key = "eagle3.extract_layers";
    const GgufValue* ids = g.header.meta.array(key, I32);
    if (!ids) throw FormatError(g.file + ": metadata key '" + key + "' is missing (the target layers the draft reads)");
    // BOOL and float items would read as numbers: true, false as layers 1, 0.
    if (!is_integer_type(ids->item_type))
        throw FormatError(g.file + ": metadata key '" + key + "' is an array of " + value_type_name(ids->item_type) +
                          ", not of integers (the target layers the draft reads)");
    if (ids->numbers.size() != size_t(kExtractedLayers))
        throw FormatError(g.file + ": " + key + " lists " + std::to_string(ids->numbers.size()) + " layers, not 3");
    std::vector<int> layers;
    for (double v : ids->numbers) {
        if (!(v >= 0 && v < target.n_layers)) {
            const std::string shown = std::fabs(v) < 1e15 ? std::to_string(int64_t(v)) : std::to_string(v);
            throw FormatError(g.file + ": " + key + " names layer " + shown + ", but the target model has layers 0 to " +
                              std::to_string(target.n_layers - 1));
        }
        layers.push_back(int(v));
    }
    return layers;
}

// fc over the listed layers, (dim, 3 dim), as fc over each distinct layer once: the column blocks
// of a repeated layer added up. Fills e.target_layers and e.fc_w. `norm`: llama.cpp's
// norm_before_fc gains over the three inputs (3 dim), or empty. Normalising is linear in the gains,
// so a repeated layer's gains go into its fc columns and the norm keeps unit gains; the norm's
// mean over 3 dim is then the mean over the distinct layers only when each is listed equally often.
void fold_repeated_layers(EagleLayer& e, const std::vector<int>& listed, std::vector<float> fc,
                          const std::vector<float>& norm, const std::string& file) {
    const size_t d = size_t(e.dim), n = listed.size();
    e.target_layers.clear();
    std::vector<size_t> slot(n);
    for (size_t i = 0; i < n; ++i) {
        const auto it = std::find(e.target_layers.begin(), e.target_layers.end(), listed[i]);
        slot[i] = size_t(it - e.target_layers.begin());
        if (it == e.target_layers.end()) e.target_layers.push_back(listed[i]);
    }
    const size_t u = e.target_layers.size();
    e.applies_fc = true;  // llama.cpp always applies fc, to the three inputs side by side
    if (!norm.empty()) {
        if (n % u != 0 || std::any_of(e.target_layers.begin(), e.target_layers.end(), [&](int l) {
                return size_t(std::count(listed.begin(), listed.end(), l)) != n / u;
            }))
            throw FormatError(file + ": eagle3.norm_before_fc over target layers listed unequally often (" +
                              layers_text(listed) + ") is not supported");
        if (u == n) {
            e.feature_norm = norm;
        } else {
            for (size_t r = 0; r < d; ++r)
                for (size_t c = 0; c < n * d; ++c) fc[r * n * d + c] *= norm[c];
            e.feature_norm.assign(u * d, 1.0f);
        }
    }
    e.fc_w.assign(d * u * d, 0.0f);
    for (size_t r = 0; r < d; ++r)
        for (size_t i = 0; i < n; ++i)
            for (size_t c = 0; c < d; ++c) e.fc_w[r * u * d + slot[i] * d + c] += fc[r * n * d + i * d + c];
}

// d2t as target ids (llama.cpp stores them whole); without it the draft vocabulary is the target's.
std::vector<int> draft_to_target(const GgufDraft& g, int64_t draft_vocab, int vocab) {
    const GgufTensorInfo* info = g.find("d2t");
    std::vector<int> out(static_cast<size_t>(draft_vocab));
    if (!info) {
        if (draft_vocab != vocab)
            throw FormatError(g.file + ": tensor 'd2t' is missing, and the draft head's " + std::to_string(draft_vocab) +
                              " rows are not the target's vocabulary of " + std::to_string(vocab));
        for (int i = 0; i < vocab; ++i) out[size_t(i)] = i;
        return out;
    }
    if (info->type != kGgmlI64) throw FormatError(g.file + ": tensor 'd2t' is not of GGML type I64");
    if (g.shape(*info) != std::vector<int64_t>{draft_vocab})
        throw FormatError(g.file + ": tensor 'd2t' has shape " + shape_text(g.shape(*info)) + ", expected [" +
                          std::to_string(draft_vocab) + "] (the draft head's rows)");
    const uint64_t data_size = g.bytes->size() - std::min<uint64_t>(g.header.data_start, g.bytes->size());
    const uint64_t nbytes = uint64_t(draft_vocab) * 8;
    if (info->offset > data_size || nbytes > data_size - info->offset)
        throw FormatError(g.file + ": tensor 'd2t' data lies outside the file");
    const uint8_t* p = g.bytes->data() + g.header.data_start + info->offset;
    for (size_t i = 0; i < out.size(); ++i) {
        int64_t to;
        std::memcpy(&to, p + 8 * i, 8);
        if (to < 0 || to >= vocab)
            throw FormatError(g.file + ": d2t maps draft token " + std::to_string(i) + " to " + std::to_string(to) +
                              ", outside the target vocabulary (0 to " + std::to_string(vocab - 1) + ")");
        out[i] = int(to);
    }
    return out;
}

// At most a layer of `target`'s shape with a draft head and an embedding as large as the
// vocabulary, in f32 (and d2t): a file of gigabytes more is refused by its size before it is read.
uint64_t largest_draft_file(const LlamaConfig& target, int hidden_dim) {
    const uint64_t d = uint64_t(target.dim), h = uint64_t(hidden_dim), v = uint64_t(target.vocab_size);
    return (10 * d * d + 3 * d * h + 2 * v * d + 8 * d) * 4 + 8 * v + (uint64_t(64) << 20);
}

}  // namespace

EagleLayer load_eagle3_gguf(const std::string& path, const LlamaConfig& target) {
    const GgufDraft head{.file = path, .bytes = {}, .header = read_gguf_header_of_file(path), .tensors = {}};
    const EagleLayer shape = layer_of_metadata(head, target);
    return load_eagle3_gguf(read_file_bytes(path, largest_draft_file(target, shape.hidden_dim)), path, target);
}

EagleLayer load_eagle3_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name,
                            const LlamaConfig& target) {
    GgufDraft g{.file = name, .bytes = bytes, .header = read_gguf_header(*bytes, name), .tensors = {}};
    for (const GgufTensorInfo& info : g.header.tensors) g.tensors[info.name] = &info;
    EagleLayer e = layer_of_metadata(g, target);
    const std::vector<int> listed = listed_layers(g, target);

    const int64_t dd = e.dim, kv = e.kv_dim(), hd = e.hidden_dim, in = 2 * dd, wide = kExtractedLayers * dd, q = e.q_dim();
    // norm_before_fc: an RMSNorm over the three inputs side by side, with gains of its own, before fc.
    const std::vector<float> norm = g.header.meta.boolean("eagle3.norm_before_fc", false)
                                        ? g.read(kFeatureNorm, {wide})
                                        : std::vector<float>{};
    fold_repeated_layers(e, listed, g.read("fc.weight", {dd, wide}), norm, name);
    const std::string b = "blk.0.";
    e.input_norm = g.read(b + "attn_norm.weight", {dd});
    e.hidden_norm = g.read(b + "attn_norm_2.weight", {dd});
    e.wq = g.read(b + "attn_q.weight", {q, in});
    e.wk = g.read(b + "attn_k.weight", {kv, in});
    e.wv = g.read(b + "attn_v.weight", {kv, in});
    e.wo = g.read(b + "attn_output.weight", {dd, q});
    e.post_norm = g.read(b + "ffn_norm.weight", {dd});
    e.w_gate = g.read(b + "ffn_gate.weight", {hd, dd});
    e.w_up = g.read(b + "ffn_up.weight", {hd, dd});
    e.w_down = g.read(b + "ffn_down.weight", {dd, hd});
    e.final_norm = g.read("output_norm.weight", {dd});
    if (g.find("rope_freqs.weight")) e.rope_freqs = g.read("rope_freqs.weight", {int64_t(e.head_dim() / 2)});  // Llama 3
    const GgufTensorInfo* head = g.find("output.weight");
    if (!head)
        throw FormatError(name + ": tensor 'output.weight' is missing (a draft that borrows the target's head is not supported)");
    const std::vector<int64_t> head_shape = g.shape(*head);
    if (head_shape.size() != 2 || head_shape[1] != dd || head_shape[0] > target.vocab_size)
        throw FormatError(name + ": tensor 'output.weight' has shape " + shape_text(head_shape) + ", expected [draft vocabulary of at most " +
                          std::to_string(target.vocab_size) + ", " + std::to_string(dd) + "]");
    e.draft_head = g.read("output.weight", head_shape);
    e.draft_to_target = draft_to_target(g, head_shape[0], target.vocab_size);
    e.target_vocab = target.vocab_size;
    // Kept in the file's F16 or BF16 on the GPU, unless fc's blocks were added up (sums of halves
    // need not be halves).
    std::vector<DType> types;
    for (const char* m : {"fc.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight",
                          "blk.0.attn_output.weight", "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight",
                          "blk.0.ffn_down.weight", "output.weight"})
        types.push_back(gguf_tensor(g.header, *g.bytes, *g.find(m), name).type);
    e.matrix_type = e.target_layers.size() == listed.size() ? common_half_type(types) : DType::F32;
    e.check_fits(target);
    return e;
}

}  // namespace medusa
