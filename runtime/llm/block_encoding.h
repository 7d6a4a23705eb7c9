// A TokenBlock in the layout the shaders read (layouts/block_params.h).
#pragma once
#include "layouts/block_params.h"
#include "llm/token_block.h"

namespace medusa {

inline layout::BlockParams encode_block(const TokenBlock& b) {
    layout::BlockParams p{};
    p.base = uint32_t(b.base);
    p.count = uint32_t(b.size());
    p.window = uint32_t(b.window);
    for (int t = 0; t < b.size(); ++t) {
        p.tokens[t] = uint32_t(b.tokens[t]);
        p.positions[t] = uint32_t(b.positions[t]);
        for (int u = 0; u < b.size(); ++u)
            if (b.sees(t, u)) p.mask[t * BLOCK_MASK_WORDS + u / 32] |= 1u << (u % 32);
        for (int w = 0; w < b.window; ++w)
            if (b.window_mask[t][w]) p.window_mask[t * BLOCK_MASK_WORDS + w / 32] |= 1u << (w % 32);
    }
    return p;
}

}  // namespace medusa
