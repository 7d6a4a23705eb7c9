// The block of tokens one forward pass processes, written by the CPU (or by the GPU's own
// Medusa step) into a small buffer so a recorded command buffer can be replayed unchanged.
// Layout (uints): [0] base cache slot of the block, [1] tokens in the block,
// [4 .. 4+TMAX) token ids, [4+TMAX .. 4+2*TMAX) positions,
// then TMAX rows of TMAX/32 words: bit u of row t set = token t may attend to block token u.
#define TMAX 128
#define MASK_WORDS (TMAX / 32)
#define P_BASE 0
#define P_COUNT 1
#define P_TOKENS 4
#define P_POS (4 + TMAX)
#define P_MASK (4 + 2 * TMAX)
