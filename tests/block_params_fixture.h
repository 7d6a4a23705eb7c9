// A token block written into the layout the shaders read (layouts/block_params.h), for kernel tests.
#pragma once
#include <memory>

#include "gpu_fixture.h"
#include "llm/block_encoding.h"

namespace medusa::test {

inline std::unique_ptr<gpu::Buffer> block_params_buffer(const TokenBlock& b) {
    const layout::BlockParams p = encode_block(b);
    auto buf = std::make_unique<gpu::Buffer>(gpu_context(), sizeof p, gpu::MemoryKind::Host);
    buf->upload(&p, sizeof p);
    return buf;
}

// A tree of `n` nodes over random parents (each before its child), as a verify block at `base`.
inline TokenBlock random_tree_block(int base, int n, int vocab, uint32_t seed) {
    std::mt19937 rng(seed);
    TokenBlock b;
    b.base = base;
    std::vector<int> parent(n, -1), depth(n, 0);
    b.mask.assign(n, std::vector<uint8_t>(n, 0));
    for (int i = 0; i < n; ++i) {
        if (i > 0) parent[i] = int(rng() % uint32_t(i)), depth[i] = depth[parent[i]] + 1;
        b.tokens.push_back(int(rng() % uint32_t(vocab)));
        b.positions.push_back(base + depth[i]);
        for (int a = i; a >= 0; a = parent[a]) b.mask[i][a] = 1;
    }
    return b;
}

}  // namespace medusa::test
