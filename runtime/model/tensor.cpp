#include "model/tensor.h"

namespace medusa {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "f32";
        case DType::F16: return "f16";
        case DType::BF16: return "bf16";
        case DType::Q8_0: return "q8_0";
        case DType::Q4_0: return "q4_0";
        case DType::Q8_G: return "q8 (llama2.c groups)";
        case DType::Q4_1: return "q4_1";
        case DType::Q5_0: return "q5_0";
        case DType::Q5_1: return "q5_1";
        case DType::Q2_K: return "q2_k";
        case DType::Q3_K: return "q3_k";
        case DType::Q4_K: return "q4_k";
        case DType::Q5_K: return "q5_k";
        case DType::Q6_K: return "q6_k";
        case DType::IQ4_NL: return "iq4_nl";
        case DType::IQ4_XS: return "iq4_xs";
    }
    return "?";
}

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::string shape_text(const std::vector<int64_t>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

Tensor f32_tensor(std::string name, const std::vector<float>& v, std::vector<int64_t> shape) {
    Tensor t;
    t.name = std::move(name);
    t.type = DType::F32;
    t.shape = shape.empty() ? std::vector<int64_t>{int64_t(v.size())} : std::move(shape);
    t.data = reinterpret_cast<const uint8_t*>(v.data());
    t.nbytes = v.size() * 4;
    return t;
}

}  // namespace medusa
