#include "model/rope_rows.h"

#include <cstring>
#include <stdexcept>

namespace medusa {

std::vector<uint8_t> permute_rope_rows(const uint8_t* data, int64_t rows, size_t row_bytes, int n_heads,
                                       bool to_rotate_half, int64_t rotated) {
    if (n_heads <= 0 || rows % (2 * int64_t(n_heads)) != 0)
        throw std::invalid_argument("permute_rope_rows: rows must split into heads of even size");
    const int64_t head = rows / n_heads;
    if (rotated == 0) rotated = head;
    if (rotated < 0 || rotated > head || rotated % 2)
        throw std::invalid_argument("permute_rope_rows: the rotated rows must be even and within the head");
    const int64_t half = rotated / 2;
    std::vector<uint8_t> out(data, data + size_t(rows) * row_bytes);
    for (int64_t h = 0; h < n_heads; ++h)
        for (int64_t i = 0; i < half; ++i)
            for (int64_t j = 0; j < 2; ++j) {
                const int64_t adjacent = h * head + 2 * i + j, rotate_half = h * head + j * half + i;
                const int64_t from = to_rotate_half ? adjacent : rotate_half, to = to_rotate_half ? rotate_half : adjacent;
                std::memcpy(out.data() + size_t(to) * row_bytes, data + size_t(from) * row_bytes, row_bytes);
            }
    return out;
}

int rope_row_heads(const LlamaConfig& c, const std::string& name) {
    if (name.rfind("layers.", 0) != 0) return 0;
    const std::string role = name.substr(name.rfind('.') + 1);
    if (role == "wq" || role == "bq") return c.n_heads;
    if (role == "wk" || role == "bk") return c.n_kv_heads;
    if (role == "q_norm" || role == "k_norm") return 1;  // one head's gains, one per row
    return 0;
}

void reorder_rotate_half_rows(ModelFile& m, std::list<std::vector<uint8_t>>& owned) {
    const int rotated = rotated_dims(m.config);
    for (Tensor& t : m.tensors) {
        const int heads = rope_row_heads(m.config, t.name);
        if (heads == 0) continue;
        // Quantized rows are whole blocks, so a row's bytes move as one.
        const size_t row_bytes = t.nbytes / size_t(t.shape[0]);
        auto& copy = owned.emplace_back(permute_rope_rows(t.data, t.shape[0], row_bytes, heads, false, rotated));
        t.data = copy.data();
    }
}

}  // namespace medusa
