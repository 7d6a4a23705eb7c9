// Buffers the GPU-resident Medusa step shares between its kernels (uint offsets).
// Tree (static per tree): node count, path count, path length (root included), top-k; then per
// node its index into the candidate list, depth, parent, first child and next sibling (rank
// order, NONE when absent); then each path (retrieve_indices row) padded with NONE.
#define NONE 0xffffffffu
#define MAX_PATH 8
#define T_NODES 0
#define T_PATHS 1
#define T_PATH_LEN 2
#define T_TOPK 3
#define T_INDEX 16
#define T_DEPTH (16 + TMAX)
#define T_PARENT (16 + 2 * TMAX)
#define T_FIRST_CHILD (16 + 3 * TMAX)
#define T_NEXT_SIBLING (16 + 4 * TMAX)
#define T_PATH_NODES (16 + 5 * TMAX)
// State carried from step to step on the GPU.
#define S_ROOT 0          // token at the tree's root: the last token emitted, not yet in the cache
#define S_STEP 1          // steps taken (seeds the random numbers)
#define S_KEPT 2          // nodes of the accepted path, root included
#define S_OLD_BASE 3      // cache slot of the root during the last step
#define S_SEED 4          // seed of this generation's random numbers
#define S_PATH 8          // node indices of the accepted path
// Trace of one step, read by the CPU: header, then per node.
#define R_ACCEPTED 0      // candidate tokens accepted (the root not counted)
#define R_BONUS 1         // the model's own next token after the accepted ones
#define R_BEST_PATH 2
#define R_BASE 3
#define R_ROOT 4
#define R_PATH 8          // MAX_PATH node indices
#define R_TOKEN 16
#define R_MODEL_P (16 + TMAX)    // probability the model gave the node's token at its parent (float bits)
#define R_HEAD_P (16 + 2 * TMAX) // probability the head gave it (float bits)
#define R_LIMIT (16 + 3 * TMAX)  // typical acceptance threshold at its parent (float bits)
#define R_STATUS (16 + 4 * TMAX) // bit 0 accepted, bit 1 passes the rule, bit 2 tried by sampling
#define R_WORDS (16 + 5 * TMAX)
// Candidate list: [0] root, then head k's rank r at 1 + k * topk + r; token ids then probabilities.
