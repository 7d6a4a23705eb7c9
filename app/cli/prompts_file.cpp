#include "prompts_file.h"

#include <algorithm>

#include "args.h"
#include "model/json_file.h"
#include "model/model_file.h"

namespace medusa::cli {

std::vector<std::string> read_prompts_file(const std::string& path) {
    const nlohmann::json j = read_json_file(path);
    if (!j.is_array()) throw FormatError(path + ": not a JSON array of prompt strings (it is a " + j.type_name() + ")");
    if (j.empty()) throw FormatError(path + ": holds no prompts");
    if (j.size() > kMaxPrompts)
        throw FormatError(path + ": holds " + std::to_string(j.size()) + " prompts, more than " +
                          std::to_string(kMaxPrompts));
    std::vector<std::string> prompts;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string which = path + ": prompt " + std::to_string(i + 1);
        if (!j[i].is_string()) throw FormatError(which + " is a " + j[i].type_name() + ", not a string");
        prompts.push_back(j[i].get<std::string>());
        if (prompts.back().empty()) throw FormatError(which + " is empty");
    }
    return prompts;
}

void check_prompt_bytes(const std::vector<std::string>& prompts, const std::string& path, const Tokenizer& tok,
                        int context, int reserved, const std::string& reserved_for) {
    const uint64_t room = uint64_t(std::max(0, context - reserved)), per_token = tok.longest_token_bytes();
    for (size_t i = 0; i < prompts.size(); ++i)
        if (prompts[i].size() > room * per_token)
            throw UsageError(path + ": prompt " + std::to_string(i + 1) + " has " + std::to_string(prompts[i].size()) +
                             " bytes: more than the context of " + std::to_string(context) + " positions holds " +
                             reserved_for + ": " + std::to_string(room) + " tokens of at most " +
                             std::to_string(per_token) + " bytes, " + std::to_string(room * per_token) + " bytes");
}

}  // namespace medusa::cli
