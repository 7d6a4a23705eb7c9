#include "llm/medusa_heads.h"

#include <algorithm>
#include <cmath>

#include "llm/cpu_reference.h"
#include "model/dequantize.h"

namespace medusa {

MedusaHeads MedusaHeads::init_from_model(const ModelFile& model, int num_heads, int num_layers) {
    if (num_heads < 1 || num_heads > 8) throw std::invalid_argument("Medusa heads must number 1 to 8");
    if (num_layers < 1) throw std::invalid_argument("Medusa heads need at least one residual block");
    MedusaHeads h;
    h.dim = model.config.dim;
    h.vocab = model.config.vocab_size;
    h.layers = num_layers;
    h.source = kUntrainedSource;
    const auto classifier = dequantize(model.classifier());
    for (int k = 0; k < num_heads; ++k) {
        MedusaHead head;
        for (int l = 0; l < num_layers; ++l) {
            head.w1.emplace_back(size_t(h.dim) * h.dim, 0.0f);
            head.b1.emplace_back(size_t(h.dim), 0.0f);
        }
        head.w2 = classifier;
        h.heads.push_back(std::move(head));
    }
    return h;
}

std::vector<float> MedusaHeads::logits(int k, std::span<const float> h) const {
    const MedusaHead& head = heads.at(k);
    if (head.w2.empty()) throw std::logic_error("Medusa head " + std::to_string(k) + " shares the model's classifier: copy it in first");
    std::vector<float> x(h.begin(), h.end()), y(dim), out(vocab);
    for (int l = 0; l < layers; ++l) {
        matvec(y.data(), x.data(), head.w1[l].data(), dim, dim);
        for (int i = 0; i < dim; ++i) {
            const float v = y[i] + head.b1[l][i];
            x[i] += v / (1.0f + std::exp(-v));
        }
    }
    matvec(out.data(), x.data(), head.w2.data(), dim, vocab);
    return out;
}

void MedusaHeads::check_fits(const LlamaConfig& cfg) const {
    if (dim != cfg.dim)
        throw FormatError(source + ": Medusa heads have hidden size " + std::to_string(dim) + " but the model has " +
                          std::to_string(cfg.dim));
    if (vocab != cfg.vocab_size)
        throw FormatError(source + ": Medusa heads predict a vocabulary of " + std::to_string(vocab) +
                          " but the model has " + std::to_string(cfg.vocab_size));
}

bool MedusaHeads::w2_is_classifier(int k, const ModelFile& model) const {
    return heads.at(k).w2.empty() || heads.at(k).w2 == dequantize(model.classifier());
}

void MedusaHeads::copy_shared_classifier(const ModelFile& model) {
    std::vector<float> classifier;
    for (MedusaHead& head : heads)
        if (head.w2.empty()) {
            if (classifier.empty()) classifier = dequantize(model.classifier());
            head.w2 = classifier;
        }
}

std::string MedusaHeads::non_finite_note() const {
    auto finite = [](const std::vector<float>& v) {
        return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
    };
    std::vector<int> bad;
    for (int k = 0; k < count(); ++k) {
        const MedusaHead& h = heads[k];
        bool ok = finite(h.w2);
        for (size_t l = 0; ok && l < h.w1.size(); ++l) ok = finite(h.w1[l]) && finite(h.b1[l]);
        if (!ok) bad.push_back(k + 1);
    }
    if (bad.empty()) return "";
    std::string which;
    for (size_t i = 0; i < bad.size(); ++i)
        which += (i == 0 ? "" : i + 1 == bad.size() ? " and " : ", ") + std::to_string(bad[i]);
    return source + ": " + (bad.size() == 1 ? "head " + which + " holds" : "heads " + which + " hold") +
           " NaN or infinite weights: " + (bad.size() == 1 ? "it never guesses" : "they never guess") +
           " a token that is accepted";
}

}  // namespace medusa
