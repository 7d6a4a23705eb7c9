// A named tensor as a file stores it: its element layout, shape and bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace medusa {

// Element layouts, byte-exact as stored in the source files.
enum class DType {
    F32,   // little-endian float
    F16,   // IEEE half
    BF16,  // bfloat16
    Q8_0,  // GGUF blocks of 32: f16 scale + 32 x int8
    Q4_0,  // GGUF blocks of 32: f16 scale + 16 bytes of nibbles (low nibbles = elements 0..15), value (q-8)*d
    Q8_G,  // llama2.c v2: all int8 values of the tensor, then one f32 scale per group_size values
    // The other GGUF (ggml) block layouts, byte-exact; model/block_format.h gives their sizes.
    Q4_1, Q5_0, Q5_1,                // blocks of 32
    Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,    // super-blocks of 256 with sub-block scales
    IQ4_NL, IQ4_XS,                  // 4-bit indices into a fixed non-linear table (blocks of 32, 256)
};
const char* dtype_name(DType t);

struct Tensor {
    std::string name;
    DType type = DType::F32;
    std::vector<int64_t> shape;  // outermost first: a matrix is {rows (outputs), cols (inputs)}
    int group_size = 0;          // values per block of a GGUF block type, the file's group size for Q8_G, 0 otherwise
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t numel() const;
};

// An F32 tensor viewing floats the caller owns (they must outlive it): heads, layers and
// training state handed to upload_matrix or write_safetensors. An empty shape: one dimension.
Tensor f32_tensor(std::string name, const std::vector<float>& v, std::vector<int64_t> shape = {});
// A shape as messages write it: "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace medusa
