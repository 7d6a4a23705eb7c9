#include "args.h"

#include "number_text.h"

namespace medusa::cli {

namespace {
std::string canonical(const std::string& a) {
    static const std::map<std::string, std::string> aliases = {
        {"-m", "--model"}, {"-p", "--prompt"}, {"-n", "--n-predict"}, {"-s", "--seed"},
        {"--temperature", "--temp"}, {"-c", "--ctx-size"}, {"--context", "--ctx-size"}};
    auto it = aliases.find(a);
    return it == aliases.end() ? a : it->second;
}
}  // namespace

Args::Args(int argc, char** argv, int first, const std::set<std::string>& flags, const std::set<std::string>& options) {
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a.size() < 2 || a[0] != '-') {
            positional_.push_back(a);
            continue;
        }
        const std::string name = canonical(a);
        if (flags.count(name)) {
            values_[name] = "1";
        } else if (options.count(name)) {
            if (i + 1 >= argc) throw UsageError(a + " needs a value");
            values_[name] = argv[++i];
        } else {
            throw UsageError("unknown option " + a);
        }
    }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

int Args::integer(const std::string& name, int fallback) const {
    if (!has(name)) return fallback;
    try {
        size_t used = 0;
        int v = std::stoi(str(name), &used);
        if (used != str(name).size()) throw std::invalid_argument("");
        return v;
    } catch (const std::exception&) {
        throw UsageError(name + " expects an integer, got '" + str(name) + "'");
    }
}

float Args::number(const std::string& name, float fallback) const {
    if (!has(name)) return fallback;
    if (const auto v = parse_finite_float(str(name))) return *v;
    throw UsageError(name + " expects a finite number, got '" + str(name) + "'");
}

}  // namespace medusa::cli
