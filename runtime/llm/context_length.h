// How many positions a KV cache holds. A model file's context length is a claim (a 295 KB file
// may claim 2^20), so a cache is sized to what decoding will reach, not to the claim.
#pragma once

namespace medusa {

// What a caller that cannot tell how far it will decode (a chat) starts with.
constexpr int kDefaultContext = 4096;

// `requested` > 0: exactly that (more than `trained` only because the user asked). Otherwise
// `needed` (the positions the caller will use; 0: kDefaultContext), up to `trained`.
inline int choose_context(int requested, int trained, int needed = 0) {
    if (requested > 0) return requested;
    const int want = needed > 0 ? needed : kDefaultContext;
    return want < trained ? want : trained;
}

}  // namespace medusa
