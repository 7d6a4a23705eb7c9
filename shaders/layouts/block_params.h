// The tokens one forward pass processes (a TokenBlock), written into a small buffer before each
// submit so that recorded command buffers replay unchanged. The CPU writes it; a drafter that
// runs on the device fills in the tokens it drafts (medusa_gather.comp).
#ifndef MEDUSA_BLOCK_PARAMS_H
#define MEDUSA_BLOCK_PARAMS_H
#include "layouts/layout_types.h"
LAYOUT_BEGIN
struct BlockParams {
    u32 base;    // cache slot of the first block token
    u32 count;   // tokens in the block
    u32 window;  // cached slots [base - window, base) are seen only as window_mask says
    u32 reserved;
    u32 tokens[MAX_BLOCK_TOKENS];
    u32 positions[MAX_BLOCK_TOKENS];  // RoPE positions
    // Row t, bit u: block token t may attend to block token u (on top of the cached slots).
    u32 mask[MAX_BLOCK_TOKENS * BLOCK_MASK_WORDS];
    // Row t, bit w: block token t may attend to cached slot base - window + w.
    u32 window_mask[MAX_BLOCK_TOKENS * BLOCK_MASK_WORDS];
};
LAYOUT_END
// The masks' rows as RGBA32UI texels of the params buffer (attention's TEXEL variant reads a row
// with one fetch): BLOCK_MASK_WORDS = 4 words a row, 16-byte aligned.
#define BLOCK_MASK_TEXEL ((4 + 2 * MAX_BLOCK_TOKENS) / 4)
#define BLOCK_WINDOW_MASK_TEXEL (BLOCK_MASK_TEXEL + MAX_BLOCK_TOKENS)
#ifdef __cplusplus
#include <cstddef>
static_assert(BLOCK_MASK_WORDS == 4 && offsetof(medusa::layout::BlockParams, mask) == BLOCK_MASK_TEXEL * 16 &&
              offsetof(medusa::layout::BlockParams, window_mask) == BLOCK_WINDOW_MASK_TEXEL * 16);
#endif
#endif
