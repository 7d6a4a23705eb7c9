// The target's log-probabilities of the tokens a step emits, for clients that ask for them (the
// OpenAI API's logprobs): each from the distribution the verify pass gave at the node the token
// follows, log softmax of the raw logits (temperature, penalties and biases do not change what
// the model thinks of a token). Speculation changes which pass computes them, not what they are.
#pragma once
#include <span>
#include <vector>

namespace medusa {

struct TopLogprob {
    int token = 0;
    float logprob = 0;
    bool operator==(const TopLogprob&) const = default;
};

struct TokenLogprobs {
    int token = 0;
    float logprob = 0;
    std::vector<TopLogprob> top;  // the likeliest tokens, likeliest first (ties: lower id first)
};

// Of softmax(logits): `token`'s log-probability and the `top` likeliest tokens'.
TokenLogprobs token_logprobs(std::span<const float> logits, int token, int top);

}  // namespace medusa
