#include "llm/attention_splits.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace medusa {

uint32_t attention_splits(uint32_t n_heads, int n_tokens, uint32_t ctx, uint32_t head_dim,
                          std::optional<uint32_t> wanted) {
    const uint32_t pairs = std::max(1u, n_heads * uint32_t(std::max(1, n_tokens)));
    const uint32_t fits = std::max(1u, ctx / (head_dim + 2));
    if (wanted) return std::clamp(*wanted, 1u, fits);
    const uint32_t fill = (128 + pairs - 1) / pairs;
    return std::clamp(std::min({fill, 16u, ctx / 256}), 1u, fits);
}

std::optional<uint32_t> attention_splits_from_environment() {
    const char* v = std::getenv("MEDUSA_ATTENTION_SPLITS");
    if (!v || !*v) return std::nullopt;
    const std::string value = v;
    char* end = nullptr;
    const unsigned long n = std::strtoul(value.c_str(), &end, 10);
    if (*end || value[0] == '-' || n < 1 || n > 64)
        throw std::invalid_argument("MEDUSA_ATTENTION_SPLITS='" + value +
                                    "' must be a count from 1 to 64 of key ranges per token and head");
    return uint32_t(n);
}

}  // namespace medusa
