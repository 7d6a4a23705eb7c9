// The sources of an EAGLE block (EagleRunner::run's) in the layout the shaders read
// (layouts/eagle_inputs.h), checked: one per token, output rows already written, target slots
// inside the context, and room in the output store for the block's own rows.
#pragma once
#include <span>
#include <stdexcept>

#include "layouts/eagle_inputs.h"

namespace medusa {

inline layout::EagleInputs encode_eagle_inputs(std::span<const int> source, int block_size, int rows, int store_rows,
                                               int context) {
    if (int(source.size()) != block_size) throw std::invalid_argument("an EAGLE block needs one source per token");
    if (rows + block_size > store_rows) throw std::length_error("the EAGLE output store is full: restart() between steps");
    layout::EagleInputs in{};
    in.store_base = uint32_t(rows);
    for (int t = 0; t < block_size; ++t) {
        const int s = source[t];
        if (s >= rows) throw std::out_of_range("an EAGLE feature source past the output rows");
        if (s < 0 && -1 - s >= context) throw std::out_of_range("an EAGLE feature source past the context");
        in.source[t] = s >= 0 ? uint32_t(s) : (EAGLE_FROM_TARGET | uint32_t(-1 - s));
    }
    return in;
}

}  // namespace medusa
