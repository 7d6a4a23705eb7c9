// The accepted path of the last verified tree, as the KV cache compaction (kv_compact.comp) and
// the hand-over of the last accepted hidden state (select_row.comp) read it.
#ifndef MEDUSA_KV_COMMIT_H
#define MEDUSA_KV_COMMIT_H
#include "layouts/layout_types.h"
LAYOUT_BEGIN
struct KvCommit {
    u32 kept;      // nodes on the path, root included (>= 1)
    u32 old_base;  // cache slot of the tree's root
    u32 reserved[2];
    u32 path[MAX_BLOCK_TOKENS];  // block indices of the path's nodes, root (0) first, increasing
};
LAYOUT_END
#endif
