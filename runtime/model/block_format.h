// The GGUF (ggml) weight types this engine runs, described once: block size in values and
// bytes, the ggml type id, and where a block keeps its f16 scales. Loaders, the dequantizer,
// the GPU repacker and the synthetic models all read this table.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/tensor.h"

namespace medusa {

struct BlockFormat {
    DType type;
    const char* ggml_name;  // "Q4_K", as llama.cpp prints it
    uint32_t ggml_id;       // the ggml_type enum value stored in GGUF tensor infos
    int values;             // values per block (1 for F32/F16/BF16)
    int bytes;              // bytes per block
    std::vector<int> half_offsets;  // byte offsets of the block's f16 scale fields (d, dmin, m)
};

// Every GGUF type this engine loads, F32 first.
const std::vector<BlockFormat>& gguf_formats();
// The format of a GGUF type, or null when the engine does not run it.
const BlockFormat* gguf_format(DType t);
const BlockFormat* gguf_format_by_id(uint32_t ggml_id);
// llama.cpp's name for any ggml type id ("IQ2_XXS"), or "type N" for ids it never had.
std::string ggml_type_name(uint32_t ggml_id);
// The GGUF type named like dtype_name() ("q4_k"), or null.
const BlockFormat* gguf_format_by_name(const std::string& name);
// "F32, F16, ..., IQ4_XS": for error messages.
std::string supported_gguf_types();
// ggml quantizes row by row, so a block never spans two rows: "" when rows of `cols` values are
// whole blocks of `f`, else "has rows of N values, not a multiple of the V-value X block".
std::string split_block_problem(const BlockFormat& f, int64_t cols);

}  // namespace medusa
