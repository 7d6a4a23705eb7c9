#include "model/fused_tensors.h"

#include <string>
#include <utility>

namespace medusa {

namespace {

// Rows [first, first + rows) of a matrix stored row after row (every block type here is).
Tensor row_view(const Tensor& t, std::string name, int64_t first, int64_t rows) {
    const size_t row_bytes = t.nbytes / size_t(t.shape[0]);
    Tensor v = t;
    v.name = std::move(name);
    v.shape[0] = rows;
    v.data = t.data + size_t(first) * row_bytes;
    v.nbytes = size_t(rows) * row_bytes;
    return v;
}

void split(ModelFile& m, size_t index, const std::vector<std::pair<std::string, int64_t>>& parts, const char* what) {
    const Tensor fused = m.tensors[index];
    const std::string layer = fused.name.substr(0, fused.name.rfind('.') + 1);
    int64_t rows = 0;
    std::string sum;
    for (const auto& [role, n] : parts) {
        rows += n;
        sum += (sum.empty() ? "" : " + ") + role + " " + std::to_string(n);
    }
    if (fused.shape.size() != 2 || fused.shape[0] != rows || fused.shape[1] != m.config.dim)
        throw FormatError(m.path + ": tensor '" + fused.name + "' (" + what + ") has shape " + shape_text(fused.shape) +
                          ", expected [" + sum + " = " + std::to_string(rows) + ", " + std::to_string(m.config.dim) +
                          "] from the model configuration");
    if (fused.type == DType::Q8_G)
        throw FormatError(m.path + ": tensor '" + fused.name + "' stores its groups across rows and cannot be split");
    m.tensors.erase(m.tensors.begin() + std::ptrdiff_t(index));
    int64_t first = 0;
    for (const auto& [role, n] : parts) {
        if (m.find(layer + role))
            throw FormatError(m.path + ": tensor '" + layer + role + "' is stored both on its own and inside '" +
                              fused.name + "'");
        m.tensors.push_back(row_view(fused, layer + role, first, n));
        first += n;
    }
}

bool ends_with(const std::string& s, const char* tail) {
    const std::string t = tail;
    return s.size() > t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

void split_fused_tensors(ModelFile& m) {
    const LlamaConfig& c = m.config;
    for (size_t i = 0; i < m.tensors.size();) {
        const std::string& name = m.tensors[i].name;
        if (name.rfind("layers.", 0) == 0 && ends_with(name, ".wqkv"))
            split(m, i, {{"wq", c.q_dim()}, {"wk", c.kv_dim()}, {"wv", c.kv_dim()}}, "q|k|v fused");
        else if (name.rfind("layers.", 0) == 0 && ends_with(name, ".w13"))
            split(m, i, {{"w1", c.hidden_dim}, {"w3", c.hidden_dim}}, "gate|up fused");
        else
            ++i;
    }
}

}  // namespace medusa
