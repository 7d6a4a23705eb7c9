#include "llm/matrix_variant.h"

#include <stdexcept>
#include <string>

namespace medusa {

using gpu::Shader;

namespace {
[[noreturn]] void unknown(MatrixVariant v) {
    throw std::logic_error("no matrix variant " + std::to_string(int(v)));
}
}  // namespace

const char* variant_name(MatrixVariant v) {
    switch (v) {
#define MEDUSA_NAME(e, suffix, epw) \
    case MatrixVariant::e: return #suffix;
        MEDUSA_MATRIX_VARIANTS(MEDUSA_NAME)
#undef MEDUSA_NAME
    }
    unknown(v);
}

uint32_t elements_per_word(MatrixVariant v) {
    switch (v) {
#define MEDUSA_EPW(e, suffix, epw) \
    case MatrixVariant::e: return epw;
        MEDUSA_MATRIX_VARIANTS(MEDUSA_EPW)
#undef MEDUSA_EPW
    }
    unknown(v);
}

Shader matmul_shader(MatrixVariant v, bool texel, bool rope) {
    switch (v) {
#define MEDUSA_MATMUL(e, suffix, epw)                                                              \
    case MatrixVariant::e:                                                                         \
        if (rope) return texel ? Shader::matmul_##suffix##_texel_rope : Shader::matmul_##suffix##_rope; \
        return texel ? Shader::matmul_##suffix##_texel : Shader::matmul_##suffix;
        MEDUSA_MATRIX_VARIANTS(MEDUSA_MATMUL)
#undef MEDUSA_MATMUL
    }
    unknown(v);
}

Shader matmul_tiled_shader(MatrixVariant v, TileKernel kernel) {
    switch (v) {
#define MEDUSA_MATMUL_TILED(e, suffix, epw)                                          \
    case MatrixVariant::e:                                                           \
        switch (kernel) {                                                            \
            case TileKernel::Invocations: return Shader::matmul_tiled_##suffix;      \
            case TileKernel::MatrixUnits: return Shader::matmul_coopmat_##suffix;    \
            case TileKernel::EmulatedMatrixUnits: return Shader::matmul_coopmat_##suffix##_emulated; \
        }                                                                            \
        break;
        MEDUSA_MATRIX_VARIANTS(MEDUSA_MATMUL_TILED)
#undef MEDUSA_MATMUL_TILED
    }
    unknown(v);
}

Shader embed_shader(MatrixVariant v) {
    switch (v) {
#define MEDUSA_EMBED(e, suffix, epw) \
    case MatrixVariant::e: return Shader::embed_##suffix;
        MEDUSA_MATRIX_VARIANTS(MEDUSA_EMBED)
#undef MEDUSA_EMBED
    }
    unknown(v);
}

}  // namespace medusa
