#include "prompts_file.h"

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

}  // namespace medusa::cli
