#include "args.h"

#include <algorithm>
#include <vector>

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
// Edit distance (insertions, deletions, substitutions, and swaps of neighbours).
size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

// " (did you mean --x?)" for the accepted option nearest to a misspelt one, when one is near.
std::string suggestion(const std::string& given, const std::set<std::string>& flags, const std::set<std::string>& options) {
    std::string best;
    size_t best_d = std::max<size_t>(2, given.size() / 4) + 1;
    for (const auto* names : {&flags, &options})
        for (const std::string& n : *names)
            if (const size_t d = distance(given, n); d < best_d) best_d = d, best = n;
    return best.empty() ? "" : " (did you mean " + best + "?)";
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
        spelling_[name] = a;
        if (flags.count(name)) {
            values_[name] = "1";
        } else if (options.count(name)) {
            if (i + 1 >= argc) throw UsageError(a + " needs a value");
            values_[name] = argv[++i];
        } else {
            throw UsageError("unknown option " + a + suggestion(a, flags, options));
        }
    }
}

std::string Args::spelled(const std::string& name) const {
    const auto it = spelling_.find(name);
    return it == spelling_.end() ? name : it->second;
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
        throw UsageError(spelled(name) + " expects an integer, got '" + str(name) + "'");
    }
}

float Args::number(const std::string& name, float fallback) const {
    if (!has(name)) return fallback;
    if (const auto v = parse_finite_float(str(name))) return *v;
    throw UsageError(spelled(name) + " expects a finite number, got '" + str(name) + "'");
}

}  // namespace medusa::cli
