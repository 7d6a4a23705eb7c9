// Where each token of an EAGLE draft-layer block takes its feature from, and where its output
// goes: the layer's input is the pair (feature, embedding of the token), the feature being either
// the target's own (its feature cache at a committed slot) or a prediction of an earlier block of
// this step (a row of the output store).
#ifndef MEDUSA_EAGLE_INPUTS_H
#define MEDUSA_EAGLE_INPUTS_H
#include "layouts/layout_types.h"
#define EAGLE_FROM_TARGET 0x80000000u  // source bit: the rest is a target cache slot
LAYOUT_BEGIN
struct EagleInputs {
    u32 store_base;  // this block's outputs become store rows [store_base, store_base + count)
    u32 reserved[3];
    u32 source[MAX_BLOCK_TOKENS];  // a store row, or EAGLE_FROM_TARGET | target slot
};
LAYOUT_END
#endif
