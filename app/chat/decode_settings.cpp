#include "decode_settings.h"

namespace medusa::chat {

std::string DecodeSettings::decoder_key() const {
    return model_path + "|" + tokenizer_path + "|" + heads_path + "|" + (medusa ? "m" : "p") + "|" + tree + "|" +
           std::to_string(num_heads) + "|" + accept_rule_name(rule) + "|" + std::to_string(temperature) + "|" +
           std::to_string(typical_eps) + "|" + std::to_string(typical_delta) + "|" + std::to_string(max_new_tokens);
}

std::string DecodeSettings::mode_name() const {
    if (!medusa) return "plain decoding";
    std::string r = accept_rule_name(rule);
    if (rule != AcceptRule::Greedy) r += " T=" + std::to_string(temperature).substr(0, 4);
    return "medusa (" + tree + ", " + std::to_string(num_heads) + " heads, " + r + ")";
}

}  // namespace medusa::chat
