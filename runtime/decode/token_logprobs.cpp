#include "decode/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace medusa {

TokenLogprobs token_logprobs(std::span<const float> logits, int token, int top) {
    double most = -INFINITY;
    for (float x : logits) most = std::max(most, double(x));
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - most);
    const double log_z = most + std::log(sum);
    TokenLogprobs out;
    out.token = token;
    out.logprob = float(double(logits[size_t(token)]) - log_z);
    std::vector<int> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    const size_t n = std::min(size_t(std::max(top, 0)), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + long(n), ids.end(), [&](int a, int b) {
        return logits[size_t(a)] != logits[size_t(b)] ? logits[size_t(a)] > logits[size_t(b)] : a < b;
    });
    for (size_t i = 0; i < n; ++i) out.top.push_back({ids[i], float(double(logits[size_t(ids[i])]) - log_z)});
    return out;
}

}  // namespace medusa
