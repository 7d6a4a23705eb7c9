#include "llm/medusa_heads_io.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model/dequantize.h"
#include "model/safetensors_file.h"

namespace medusa {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFileName = "medusa_lm_head.safetensors";

// Looks a key up with and without the "medusa_head." prefix that some exporters add.
const Tensor* find_key(const SafetensorsFile& f, const std::string& key) {
    if (const Tensor* t = f.find(key)) return t;
    return f.find("medusa_head." + key);
}

std::vector<float> read_tensor(const SafetensorsFile& f, const std::string& key, std::vector<int64_t> shape) {
    const Tensor* t = find_key(f, key);
    if (!t) throw FormatError(f.path() + ": tensor '" + key + "' is missing");
    if (t->shape != shape) {
        auto str = [](const std::vector<int64_t>& s) {
            std::string r = "[";
            for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
            return r + "]";
        };
        throw FormatError(f.path() + ": tensor '" + key + "' has shape " + str(t->shape) + ", expected " + str(shape));
    }
    return dequantize(*t);
}

// Number of consecutive indices i for which `key(i)` exists.
int count_keys(const SafetensorsFile& f, const std::function<std::string(int)>& key) {
    int n = 0;
    while (find_key(f, key(n))) ++n;
    return n;
}

}  // namespace

MedusaHeads load_medusa_heads(const std::string& path, const LlamaConfig& model) {
    fs::path file = path;
    if (fs::is_directory(file)) file /= kFileName;
    if (!fs::exists(file)) throw FormatError(file.string() + ": no such Medusa head file");
    const SafetensorsFile f = SafetensorsFile::open(file.string());
    const std::string name = file.string();

    // config.json beside the file, when present, says how many heads and blocks to expect.
    int num_heads = -1, num_layers = -1;
    const fs::path config = file.parent_path() / "config.json";
    if (fs::exists(config)) {
        std::ifstream in(config);
        const json j = json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.is_object()) throw FormatError(config.string() + ": not a JSON object");
        if (j.contains("medusa_num_heads")) num_heads = j["medusa_num_heads"].get<int>();
        if (j.contains("medusa_num_layers")) num_layers = j["medusa_num_layers"].get<int>();
    }
    if (num_heads < 0) num_heads = count_keys(f, [](int k) { return std::to_string(k) + ".0.linear.weight"; });
    if (num_layers < 0)
        num_layers = count_keys(f, [](int l) { return "0." + std::to_string(l) + ".linear.weight"; });
    if (num_heads < 1 || num_heads > 8)
        throw FormatError(name + ": holds " + std::to_string(num_heads) + " Medusa heads (1 to 8 are supported)");
    if (num_layers < 1 || num_layers > 16)
        throw FormatError(name + ": Medusa heads with " + std::to_string(num_layers) + " residual blocks");

    // Sizes come from the file, then are checked against the model so the error names both.
    const std::string w2_key = "0." + std::to_string(num_layers) + ".weight";
    const Tensor* w2 = find_key(f, w2_key);
    if (!w2 || w2->shape.size() != 2) throw FormatError(name + ": tensor '" + w2_key + "' is missing or not a matrix");
    MedusaHeads h;
    h.source = name;
    h.vocab = int(w2->shape[0]);
    h.dim = int(w2->shape[1]);
    h.layers = num_layers;
    h.check_fits(model);
    const int64_t d = h.dim, v = h.vocab;
    for (int k = 0; k < num_heads; ++k) {
        MedusaHead head;
        for (int l = 0; l < num_layers; ++l) {
            const std::string p = std::to_string(k) + "." + std::to_string(l) + ".linear.";
            head.w1.push_back(read_tensor(f, p + "weight", {d, d}));
            head.b1.push_back(read_tensor(f, p + "bias", {d}));
        }
        head.w2 = read_tensor(f, std::to_string(k) + "." + std::to_string(num_layers) + ".weight", {v, d});
        h.heads.push_back(std::move(head));
    }
    return h;
}

void save_medusa_heads(const MedusaHeads& heads, const std::string& folder) {
    fs::create_directories(folder);
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
        Tensor t;
        t.name = name;
        t.type = DType::F32;
        t.shape = std::move(shape);
        t.data = reinterpret_cast<const uint8_t*>(v.data());
        t.nbytes = v.size() * 4;
        tensors.push_back(std::move(t));
    };
    const int64_t d = heads.dim, v = heads.vocab;
    for (int k = 0; k < heads.count(); ++k) {
        const MedusaHead& head = heads.heads[k];
        for (int l = 0; l < heads.layers; ++l) {
            const std::string p = std::to_string(k) + "." + std::to_string(l) + ".linear.";
            add(p + "weight", head.w1[l], {d, d});
            add(p + "bias", head.b1[l], {d});
        }
        add(std::to_string(k) + "." + std::to_string(heads.layers) + ".weight", head.w2, {v, d});
    }
    write_safetensors((fs::path(folder) / kFileName).string(), tensors, {{"format", "pt"}});
    const json config = {{"medusa_num_heads", heads.count()},
                         {"medusa_num_layers", heads.layers},
                         {"hidden_size", heads.dim},
                         {"vocab_size", heads.vocab},
                         {"base_model_name_or_path", heads.source}};
    std::ofstream out(fs::path(folder) / "config.json");
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(folder + "/config.json: write failed");
}

}  // namespace medusa
