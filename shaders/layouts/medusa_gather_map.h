// Where each node of a Medusa tree takes its token from: the heads' candidate list is
// [root, head 0's top-k, head 1's top-k, ...] and node i reads entry candidate[i] (0 for the
// root). The gather also reports the head's probability of each node's token to the CPU.
#ifndef MEDUSA_GATHER_MAP_H
#define MEDUSA_GATHER_MAP_H
#include "layouts/layout_types.h"
LAYOUT_BEGIN
struct MedusaGatherMap {
    u32 nodes;  // nodes of the full tree; a verify block may use a prefix of them
    u32 reserved[3];
    u32 candidate[MAX_BLOCK_TOKENS];
};
struct DraftProbs {
    float prob[MAX_BLOCK_TOKENS];  // the drafter's probability of each block token (1 at the root)
};
LAYOUT_END
#endif
