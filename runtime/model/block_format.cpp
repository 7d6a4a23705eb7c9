#include "model/block_format.h"

namespace medusa {

// Sizes and field offsets follow ggml's block structs (ggml-common.h).
const std::vector<BlockFormat>& gguf_formats() {
    static const std::vector<BlockFormat> formats = {
        {DType::F32, "F32", 0, 1, 4, {}},
        {DType::F16, "F16", 1, 1, 2, {}},
        {DType::BF16, "BF16", 30, 1, 2, {}},
        {DType::Q4_0, "Q4_0", 2, 32, 18, {0}},          // d, qs[16]
        {DType::Q4_1, "Q4_1", 3, 32, 20, {0, 2}},       // d, m, qs[16]
        {DType::Q5_0, "Q5_0", 6, 32, 22, {0}},          // d, qh[4], qs[16]
        {DType::Q5_1, "Q5_1", 7, 32, 24, {0, 2}},       // d, m, qh[4], qs[16]
        {DType::Q8_0, "Q8_0", 8, 32, 34, {0}},          // d, qs[32]
        {DType::Q2_K, "Q2_K", 10, 256, 84, {80, 82}},   // scales[16], qs[64], d, dmin
        {DType::Q3_K, "Q3_K", 11, 256, 110, {108}},     // hmask[32], qs[64], scales[12], d
        {DType::Q4_K, "Q4_K", 12, 256, 144, {0, 2}},    // d, dmin, scales[12], qs[128]
        {DType::Q5_K, "Q5_K", 13, 256, 176, {0, 2}},    // d, dmin, scales[12], qh[32], qs[128]
        {DType::Q6_K, "Q6_K", 14, 256, 210, {208}},     // ql[128], qh[64], scales[16], d
        {DType::IQ4_NL, "IQ4_NL", 20, 32, 18, {0}},     // d, qs[16]
        {DType::IQ4_XS, "IQ4_XS", 23, 256, 136, {0}},   // d, scales_h, scales_l[4], qs[128]
    };
    return formats;
}

const BlockFormat* gguf_format(DType t) {
    for (const auto& f : gguf_formats())
        if (f.type == t) return &f;
    return nullptr;
}

const BlockFormat* gguf_format_by_id(uint32_t ggml_id) {
    for (const auto& f : gguf_formats())
        if (f.ggml_id == ggml_id) return &f;
    return nullptr;
}

const BlockFormat* gguf_format_by_name(const std::string& name) {
    for (const auto& f : gguf_formats())
        if (name == dtype_name(f.type)) return &f;
    return nullptr;
}

std::string ggml_type_name(uint32_t id) {
    static const char* names[] = {"F32",     "F16",    "Q4_0",   "Q4_1",   "Q4_2",  "Q4_3",   "Q5_0",  "Q5_1",
                                  "Q8_0",    "Q8_1",   "Q2_K",   "Q3_K",   "Q4_K",  "Q5_K",   "Q6_K",  "Q8_K",
                                  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
                                  "I8",      "I16",    "I32",    "I64",    "F64",   "IQ1_M",  "BF16",  "Q4_0_4_4",
                                  "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8"};
    if (id < sizeof(names) / sizeof(names[0])) return std::string(names[id]) + " (type " + std::to_string(id) + ")";
    return "type " + std::to_string(id);
}

std::string supported_gguf_types() {
    std::string s;
    for (const auto& f : gguf_formats()) s += (s.empty() ? "" : ", ") + std::string(f.ggml_name);
    return s;
}

std::string split_block_problem(const BlockFormat& f, int64_t cols) {
    if (cols > 0 && cols % f.values == 0) return "";
    return "has rows of " + std::to_string(cols) + " values, not a multiple of the " + std::to_string(f.values) +
           "-value " + f.ggml_name + " block";
}

}  // namespace medusa
