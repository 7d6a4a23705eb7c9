#include "llm/matrix_views.h"

#include <algorithm>
#include <stdexcept>

#include "model/dequantize.h"
#include "model/half_float.h"

namespace medusa {

MatrixViews::MatrixViews(DType type) : type_(type) {
    if (type != DType::F32 && type != DType::F16 && type != DType::BF16)
        throw std::invalid_argument("matrix views are f32, f16 or bf16");
}

Tensor MatrixViews::view(const std::vector<float>& v, int rows, int cols) {
    if (v.size() != size_t(rows) * size_t(cols)) throw std::invalid_argument("a matrix view of the wrong size");
    if (type_ == DType::F32) return f32_tensor("matrix", v, {rows, cols});
    std::vector<uint16_t>& out = narrowed_.emplace_back(v.size());
    std::transform(v.begin(), v.end(), out.begin(), type_ == DType::F16 ? float_to_half : float_to_bf16);
    Tensor t;
    t.name = "matrix";
    t.type = type_;
    t.shape = {rows, cols};
    t.data = reinterpret_cast<const uint8_t*>(out.data());
    t.nbytes = out.size() * 2;
    return t;
}

DType common_half_type(const std::vector<DType>& types) {
    if (types.empty()) return DType::F32;
    const DType t = types.front();
    const bool same = std::all_of(types.begin(), types.end(), [&](DType x) { return x == t; });
    return same && (t == DType::F16 || t == DType::BF16) ? t : DType::F32;
}

}  // namespace medusa
