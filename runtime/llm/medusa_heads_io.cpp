#include "llm/medusa_heads_io.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <map>
#include <nlohmann/json.hpp>

#include "model/atomic_file.h"
#include "model/dequantize.h"
#include "model/file_bytes.h"
#include "model/gguf_metadata.h"
#include "model/json_file.h"
#include "model/safetensors_file.h"
#include "model/torch_checkpoint.h"
#include "model/half_float.h"

namespace medusa {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFileName = "medusa_lm_head.safetensors";
constexpr int kMaxHeads = 8, kMaxBlocks = 16;  // what a head file may hold

// The named tensors of a head file, whatever its container; keys without the "medusa_head." or
// "medusa_heads." prefix some exporters add.
struct HeadFile {
    std::string path;
    std::map<std::string, Tensor> tensors;
    std::map<std::string, std::string> unsupported;  // name -> element type
    std::shared_ptr<const void> keep;

    const Tensor* find(const std::string& key) const {
        const auto it = tensors.find(key);
        return it == tensors.end() ? nullptr : &it->second;
    }
};

std::string without_prefix(const std::string& key) {
    for (const char* p : {"medusa_head.", "medusa_heads."})
        if (key.rfind(p, 0) == 0) return key.substr(std::string(p).size());
    return key;
}

// PyTorch's storage class as the element type people know ("LongStorage": int64).
std::string storage_element_name(const std::string& storage) {
    static const std::map<std::string, std::string> names = {
        {"LongStorage", "int64"}, {"IntStorage", "int32"},  {"ShortStorage", "int16"}, {"CharStorage", "int8"},
        {"ByteStorage", "uint8"}, {"BoolStorage", "bool"}, {"DoubleStorage", "float64"}};
    const auto it = names.find(storage);
    return it == names.end() ? storage : it->second;
}

bool is_gguf(const uint8_t* data, size_t size) { return size >= 4 && std::memcmp(data, "GGUF", 4) == 0; }

// A GGUF is never heads: named for what it is (a model, or an EAGLE-3 layer), from its header.
[[noreturn]] void refuse_gguf(const std::string& path, const GgufHeader* header) {
    const std::string arch = header ? header->meta.text("general.architecture") : "";
    if (arch == "eagle3")
        throw FormatError(path + ": an EAGLE-3 draft layer (GGUF), not Medusa heads: give it to --eagle");
    throw FormatError(path + ": a GGUF model" + (arch.empty() ? "" : " (architecture '" + arch + "')") +
                      ", not Medusa heads: --heads takes medusa_lm_head.safetensors, a PyTorch checkpoint of the "
                      "heads, or a folder holding one");
}

HeadFile open_head_file(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& path) {
    if (is_gguf(bytes->data(), bytes->size())) {
        std::optional<GgufHeader> header;
        try {
            header = read_gguf_header(*bytes, path);
        } catch (const std::exception&) {
        }
        refuse_gguf(path, header ? &*header : nullptr);
    }
    HeadFile h;
    h.path = path;
    auto add = [&](const std::string& key, const Tensor& t) {
        if (!h.tensors.emplace(without_prefix(key), t).second)
            throw FormatError(h.path + ": tensor '" + without_prefix(key) + "' appears twice");
    };
    if (looks_like_zip(*bytes)) {
        const TorchCheckpoint c = read_torch_checkpoint(bytes, h.path);
        for (const auto& [key, t] : c.tensors) add(key, t);
        for (const auto& [key, type] : c.others) h.unsupported[without_prefix(key)] = storage_element_name(type);
    } else {
        // A safetensors file opens with its header's length; more than the file holds is something
        // else altogether (a llama2.c model, a tokenizer), named as such rather than as a bad header.
        uint64_t header_len = 0;
        if (bytes->size() >= 8) std::memcpy(&header_len, bytes->data(), 8);
        if (bytes->size() < 8 || header_len > bytes->size() - 8)
            throw FormatError(h.path + ": neither a safetensors file nor a PyTorch checkpoint, so not Medusa heads: "
                                       "--heads takes medusa_lm_head.safetensors, a PyTorch checkpoint of the heads, "
                                       "or a folder holding one");
        auto f = std::make_shared<SafetensorsFile>(SafetensorsFile::from_memory(bytes, h.path));
        for (const Tensor& t : f->tensors()) add(t.name, t);
        static const char* const kIndexTypes[] = {"int64", "int32", "bool"};
        for (const IndexTensor& t : f->index_tensors()) h.unsupported[without_prefix(t.name)] = kIndexTypes[int(t.type)];
        h.keep = f;
    }
    if (!h.keep) h.keep = bytes;
    return h;
}

std::vector<float> read_tensor(const HeadFile& f, const std::string& key, const std::vector<int64_t>& shape) {
    const Tensor* t = f.find(key);
    if (!t) throw FormatError(f.path + ": tensor '" + key + "' is missing");
    if (t->shape != shape)
        throw FormatError(f.path + ": tensor '" + key + "' has shape " + shape_text(t->shape) + ", expected " +
                          shape_text(shape));
    return dequantize(*t);
}

// Number of consecutive indices i for which `key(i)` exists.
int count_keys(const HeadFile& f, const std::function<std::string(int)>& key) {
    int n = 0;
    while (n < 64 && f.find(key(n))) ++n;
    return n;
}

fs::path config_path(const fs::path& file) { return file.parent_path() / "config.json"; }

json parse_config(const std::optional<std::string>& text, const std::string& where) {
    if (!text) return json::object();
    const json j = parse_json_text(*text, where);  // shallow, or a FormatError naming the file
    if (!j.is_object()) throw FormatError(where + ": not a JSON object");
    return j;
}

// A count from config.json: a JSON integer in [lo, hi], else an error naming the file and key
// (a string, null, 1e300 or -3 must not reach an int).
int config_int(const json& j, const char* key, int fallback, int lo, int hi, const std::string& where) {
    if (!j.contains(key)) return fallback;
    const json& v = j[key];
    if (!v.is_number_integer())
        throw FormatError(where + ": '" + key + "' is " + json_excerpt(v) + ", not an integer");
    const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(hi)
                                                 : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!in_range)
        throw FormatError(where + ": '" + key + "' = " + json_excerpt(v) + " is out of range (" + std::to_string(lo) +
                          ".." + std::to_string(hi) + ")");
    return int(v.get<int64_t>());
}

// The layout's keys for head k: block l's weight and bias, and the vocabulary projection.
struct Layout {
    const char* name;
    std::function<std::string(int, int)> w1, b1;
    std::function<std::string(int, int)> w2;  // (k, layers)
};

const Layout kMedusa{"Medusa",
                     [](int k, int l) { return std::to_string(k) + "." + std::to_string(l) + ".linear.weight"; },
                     [](int k, int l) { return std::to_string(k) + "." + std::to_string(l) + ".linear.bias"; },
                     [](int k, int layers) { return std::to_string(k) + "." + std::to_string(layers) + ".weight"; }};
const Layout kVllm{"vLLM",
                   [](int k, int l) { return "blocks." + std::to_string(k) + ".layers." + std::to_string(l) + ".weight"; },
                   [](int k, int l) { return "blocks." + std::to_string(k) + ".layers." + std::to_string(l) + ".bias"; },
                   [](int k, int) { return "lm_heads." + std::to_string(k) + ".weight"; }};

fs::path find_head_file(const std::string& path) {
    fs::path file = path;
    if (!fs::is_directory(file)) {
        if (!fs::exists(file)) throw FormatError(file.string() + ": no such Medusa head file");
        return file;
    }
    for (const char* name : {kFileName, "medusa_lm_head.pt", "model.safetensors", "pytorch_model.bin"})
        if (fs::exists(file / name)) return file / name;
    throw FormatError(file.string() + ": holds no Medusa head file (medusa_lm_head.safetensors, medusa_lm_head.pt, "
                                      "or vLLM's model.safetensors)");
}

}  // namespace

MedusaHeads load_medusa_heads(const std::string& path, const LlamaConfig& model) {
    const fs::path file = find_head_file(path);
    // Before reading it whole: a model of gigabytes given as heads is named from its header.
    if (std::ifstream in(file, std::ios::binary); in) {
        char magic[4] = {};
        in.read(magic, 4);
        if (is_gguf(reinterpret_cast<const uint8_t*>(magic), size_t(in.gcount()))) {
            std::optional<GgufHeader> header;
            try {
                header = read_gguf_header_of_file(file.string());
            } catch (const std::exception&) {
            }
            refuse_gguf(file.string(), header ? &*header : nullptr);
        }
    }
    // No more than the most heads this reads could take, as f32: a file of 50 GB is refused by its
    // size, not by the allocation that would hold it.
    const uint64_t d = uint64_t(model.dim), v = uint64_t(model.vocab_size);
    const uint64_t most = kMaxHeads * (kMaxBlocks * (d * d + d) + v * d) * 4 + (uint64_t(64) << 20);
    auto bytes = read_file_bytes(file.string(), most);
    const fs::path config = config_path(file);
    std::error_code ec;
    std::optional<std::string> config_text;
    if (fs::exists(config, ec)) config_text = read_text_file(config.string());  // regular, bounded
    return load_medusa_heads_from_parts(std::move(bytes), file.string(), config_text, config.string(), model);
}

MedusaHeads load_medusa_heads_from_parts(std::shared_ptr<const std::vector<uint8_t>> head_file,
                                         const std::string& head_name, const std::optional<std::string>& config_json,
                                         const std::string& where, const LlamaConfig& model) {
    const json config = parse_config(config_json, where);  // first: the cheaper one to refuse
    const HeadFile f = open_head_file(std::move(head_file), head_name);
    const std::string& name = f.path;

    const bool vllm = f.find(kVllm.w1(0, 0)) != nullptr;
    const Layout& lay = vllm ? kVllm : kMedusa;
    for (const std::string& key : {kMedusa.w1(0, 0), kVllm.w1(0, 0)})
        if (const auto it = f.unsupported.find(key); !f.find(lay.w1(0, 0)) && it != f.unsupported.end())
            throw FormatError(name + ": tensor '" + key + "' holds " + it->second +
                              " values; Medusa heads' weights are floating point (F32, F16 or BF16)");
    if (!f.find(lay.w1(0, 0)))
        throw FormatError(name + ": no Medusa heads in it (neither '0.0.linear.weight' nor vLLM's "
                                 "'blocks.0.layers.0.weight')");
    // config.json, when present, says how many heads and blocks to expect.
    int num_heads = config_int(config, vllm ? "num_heads" : "medusa_num_heads", -1, 1, kMaxHeads, where);
    int num_layers = config_int(config, vllm ? "num_hidden_layers" : "medusa_num_layers", -1, 1, kMaxBlocks, where);
    if (num_heads < 0) num_heads = count_keys(f, [&](int k) { return lay.w1(k, 0); });
    if (num_layers < 0) num_layers = count_keys(f, [&](int l) { return lay.w1(0, l); });
    if (num_heads < 1 || num_heads > kMaxHeads)
        throw FormatError(name + ": holds " + std::to_string(num_heads) + " Medusa heads (1 to 8 are supported)");
    if (num_layers < 1 || num_layers > kMaxBlocks)
        throw FormatError(name + ": Medusa heads with " + std::to_string(num_layers) + " residual blocks");
    if (f.unsupported.count("token_map"))
        throw FormatError(name + ": heads over a truncated vocabulary (vLLM's token_map) are not supported");

    // Each head's vocabulary projection: its own, one shared (vLLM's original_lm_head), or none
    // (the model's classifier: Medusa's legacy layout, TGI's fallback).
    if (config.contains("original_lm_head") && !config["original_lm_head"].is_boolean())
        throw FormatError(where + ": 'original_lm_head' is " + json_excerpt(config["original_lm_head"]) +
                          ", not true or false");
    const bool shared_lm_head = vllm && config.value("original_lm_head", false) == true;
    int own_w2 = 0;
    for (int k = 0; k < num_heads; ++k) own_w2 += f.find(lay.w2(shared_lm_head ? 0 : k, num_layers)) != nullptr;
    if (own_w2 != 0 && own_w2 != num_heads)
        throw FormatError(name + ": " + std::to_string(own_w2) + " of " + std::to_string(num_heads) +
                          " heads have their own vocabulary projection: all or none must");
    const Tensor* w1 = f.find(lay.w1(0, 0));
    const Tensor* w2 = own_w2 ? f.find(lay.w2(0, num_layers)) : nullptr;
    if (w1->shape.size() != 2 || (w2 && w2->shape.size() != 2))
        throw FormatError(name + ": Medusa head weights are not matrices");
    MedusaHeads h;
    h.source = name;
    h.dim = int(w1->shape[1]);
    h.vocab = w2 ? int(w2->shape[0]) : model.vocab_size;
    h.layers = num_layers;
    h.check_fits(model);
    const int64_t d = h.dim, v = h.vocab;
    const bool biases = !vllm || f.find(lay.b1(0, 0));  // vLLM writes them only with medusa_fc_bias
    for (int k = 0; k < num_heads; ++k) {
        MedusaHead head;
        for (int l = 0; l < num_layers; ++l) {
            head.w1.push_back(read_tensor(f, lay.w1(k, l), {d, d}));
            head.b1.push_back(biases ? read_tensor(f, lay.b1(k, l), {d}) : std::vector<float>(size_t(d), 0.0f));
        }
        if (own_w2) head.w2 = read_tensor(f, lay.w2(shared_lm_head ? 0 : k, num_layers), {v, d});
        h.heads.push_back(std::move(head));
    }
    return h;
}

void save_medusa_heads(const MedusaHeads& heads, const std::string& folder, const HeadsExport& how) {
    if (how.layout == HeadsExport::Tgi && how.base_model.empty())
        throw std::invalid_argument("TGI's layout needs the base model's Hugging Face id (base_model_name_or_path)");
    fs::create_directories(folder);
    const DType type = how.layout == HeadsExport::Tgi ? DType::F16 : DType::F32;
    std::list<std::vector<uint16_t>> halves;  // the f16 copies, kept alive until written
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
        Tensor t;
        t.name = name;
        t.type = type;
        t.shape = std::move(shape);
        if (type == DType::F32) {
            t.data = reinterpret_cast<const uint8_t*>(v.data());
            t.nbytes = v.size() * 4;
        } else {
            auto& h = halves.emplace_back(v.size());
            for (size_t i = 0; i < v.size(); ++i) h[i] = float_to_half(v[i]);
            t.data = reinterpret_cast<const uint8_t*>(h.data());
            t.nbytes = h.size() * 2;
        }
        tensors.push_back(std::move(t));
    };
    const int64_t d = heads.dim, v = heads.vocab;
    for (int k = 0; k < heads.count(); ++k) {
        const MedusaHead& head = heads.heads[k];
        for (int l = 0; l < heads.layers; ++l) {
            add(kMedusa.w1(k, l), head.w1[l], {d, d});
            add(kMedusa.b1(k, l), head.b1[l], {d});
        }
        if (!head.w2.empty()) add(kMedusa.w2(k, heads.layers), head.w2, {v, d});
    }
    const json config = {{"medusa_num_heads", heads.count()},
                         {"medusa_num_layers", heads.layers},
                         {"hidden_size", heads.dim},
                         {"vocab_size", heads.vocab},
                         {"base_model_name_or_path", how.layout == HeadsExport::Tgi ? how.base_model : heads.source}};
    // One unit: new weights never sit beside the previous config.json.
    const std::vector<uint8_t> weights = serialize_safetensors(tensors, {{"format", "pt"}});
    const std::string config_text = json_text(config);
    const std::string_view weight_bytes(reinterpret_cast<const char*>(weights.data()), weights.size());
    write_files_atomically({{(fs::path(folder) / kFileName).string(), weight_bytes},
                            {(fs::path(folder) / "config.json").string(), config_text}});
}

}  // namespace medusa
