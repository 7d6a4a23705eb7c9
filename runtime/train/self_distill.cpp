#include "train/self_distill.h"

#include <filesystem>

#include "decode/sampler.h"
#include "decode/speculative_decoder.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/dequantize.h"
#include "model/json_file.h"
#include "model/safetensors_file.h"

namespace medusa::train {

HiddenFn gpu_hidden_states(GpuModel& model, std::vector<int> layers) {
    model.capture_layer_inputs(layers);  // the feature cache then holds their inputs
    return [&model, n = int(layers.size())](const std::vector<int>& seq, float* hidden, float* features) {
        const int dim = model.config().dim;
        for (size_t start = 0; start < seq.size(); start += TokenBlock::kMaxTokens) {
            const size_t end = std::min(seq.size(), start + TokenBlock::kMaxTokens);
            model.forward(TokenBlock::causal(int(start), std::vector<int>(seq.begin() + start, seq.begin() + end)));
            model.hidden_states().download(hidden + start * dim, (end - start) * dim * 4);
            if (features && n > 0)
                model.kv_cache().features().download(features + start * n * dim, (end - start) * n * dim * 4,
                                                     start * n * dim * 4);
        }
    };
}

HiddenFn cpu_hidden_states(CpuReferenceModel& model, std::vector<int> layers) {
    model.capture_layer_inputs(layers);
    return [&model, n = int(layers.size())](const std::vector<int>& seq, float* hidden, float* features) {
        const int dim = model.config().dim;
        for (size_t start = 0; start < seq.size(); start += TokenBlock::kMaxTokens) {
            const size_t end = std::min(seq.size(), start + TokenBlock::kMaxTokens);
            model.forward(TokenBlock::causal(int(start), std::vector<int>(seq.begin() + start, seq.begin() + end)));
            for (size_t t = start; t < end; ++t) {
                auto h = model.hidden(int(t - start));
                std::copy(h.begin(), h.end(), hidden + t * dim);
                if (features && n > 0) {
                    auto f = model.feature(int(t));
                    std::copy(f.begin(), f.end(), features + t * n * dim);
                }
            }
        }
    };
}

namespace {

// Plain decoding of `n` tokens after `prompt`, drawn with `sampling` (no stop tokens).
std::vector<int> continue_text(TreeRunner& model, const std::vector<int>& prompt, int n, SamplingParams sampling) {
    NoDrafter plain;
    DecodeOptions o;
    o.max_new_tokens = n;
    o.sampling = sampling;
    SpeculativeDecoder decoder(model, plain, o);
    std::vector<int> out;
    decoder.generate(prompt, [&](const StepTrace& st) {
        out.insert(out.end(), st.emitted.begin(), st.emitted.end());
        return true;
    });
    return out;
}

}  // namespace

DistillData generate_distill_data(TreeRunner& model, const HiddenFn& hidden,
                                  const std::vector<std::vector<int>>& prompts, int bos, const DistillOptions& o,
                                  const std::function<void(int, int)>& on_sequence) {
    const LlamaConfig& cfg = model.config();
    const int max_len = std::min(o.max_len, cfg.seq_len);
    DistillData d;
    d.dim = cfg.dim;
    d.feature_dim = int(o.feature_layers.size()) * cfg.dim;
    d.seq_start.push_back(0);
    Sampler pick({1.0f, 1.0f, o.seed * 7919 + 13});  // drives the choice of start and temperature
    for (int s = 0; s < o.sequences; ++s) {
        std::vector<int> prompt;
        bool greedy = false;
        if (!prompts.empty() && s % 2 == 0) {
            prompt = prompts[(s / 2) % prompts.size()];
        } else {
            // A sampled start: BOS, then 1-3 tokens the model itself draws at temperature 1.
            prompt = {bos};
            const int extra = 1 + int(pick.uniform() * 3);
            const auto start = continue_text(model, prompt, extra, {1.0f, 1.0f, o.seed * 1000003 + s});
            prompt.insert(prompt.end(), start.begin(), start.end());
            greedy = o.greedy_every > 0 && (s / 2) % o.greedy_every == o.greedy_every - 1;
        }
        if (int(prompt.size()) >= max_len) prompt.resize(max_len - 1);
        const float temp = o.temp_min + (o.temp_max - o.temp_min) * pick.uniform();
        std::vector<int> seq = prompt;
        const auto text = continue_text(model, prompt, max_len - int(prompt.size()),
                                        {greedy ? 0.0f : temp, o.top_p, o.seed * 2654435761u + s});
        seq.insert(seq.end(), text.begin(), text.end());
        const size_t at = d.tokens.size();
        d.tokens.insert(d.tokens.end(), seq.begin(), seq.end());
        d.hidden.resize(d.tokens.size() * d.dim);
        d.features.resize(d.tokens.size() * d.feature_dim);
        hidden(seq, d.hidden.data() + at * d.dim, d.feature_dim ? d.features.data() + at * d.feature_dim : nullptr);
        d.seq_start.push_back(int(d.tokens.size()));
        if (on_sequence) on_sequence(s + 1, o.sequences);
    }
    return d;
}

namespace {
std::vector<float> as_floats(const std::vector<int>& v) { return std::vector<float>(v.begin(), v.end()); }
// The tag as the safetensors header keeps it: the non-UTF-8 bytes of a path come back as U+FFFD.
std::string stored_tag(const std::string& tag) { return nlohmann::json::parse(json_text(tag, -1)).get<std::string>(); }
}  // namespace

void save_distill_data(const DistillData& d, const std::string& path, const std::string& tag) {
    const auto tokens = as_floats(d.tokens), starts = as_floats(d.seq_start);  // exact below 2^24
    std::vector<Tensor> tensors = {f32_tensor("tokens", tokens, {int64_t(tokens.size())}),
                                   f32_tensor("seq_start", starts, {int64_t(starts.size())}),
                                   f32_tensor("hidden", d.hidden, {int64_t(d.tokens.size()), d.dim})};
    if (d.feature_dim > 0) tensors.push_back(f32_tensor("features", d.features, {int64_t(d.tokens.size()), d.feature_dim}));
    write_safetensors(path, tensors, {{"tag", tag}});
}

bool load_distill_data(DistillData& d, const std::string& path, const std::string& tag) {
    if (!std::filesystem::exists(path)) return false;
    const SafetensorsFile f = SafetensorsFile::open(path);
    const auto it = f.metadata().find("tag");
    if (it == f.metadata().end() || it->second != stored_tag(tag)) return false;
    const Tensor& h = f.get("hidden");
    if (h.shape.size() != 2) throw FormatError(path + ": 'hidden' is not a matrix");
    d.dim = int(h.shape[1]);
    d.hidden = dequantize(h);
    const auto tokens = dequantize(f.get("tokens")), starts = dequantize(f.get("seq_start"));
    d.tokens.assign(tokens.begin(), tokens.end());
    d.seq_start.assign(starts.begin(), starts.end());
    if (const Tensor* feat = f.find("features")) {
        if (feat->shape.size() != 2) throw FormatError(path + ": 'features' is not a matrix");
        d.feature_dim = int(feat->shape[1]);
        d.features = dequantize(*feat);
    }
    if (d.seq_start.empty() || size_t(d.seq_start.back()) != d.tokens.size() ||
        d.hidden.size() != d.tokens.size() * d.dim || d.features.size() != d.tokens.size() * d.feature_dim)
        throw FormatError(path + ": inconsistent training data cache");
    return true;
}

}  // namespace medusa::train
