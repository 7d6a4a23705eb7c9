#include "cors_policy.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace medusa::serve {

namespace {

// "http://HOST" or "http://HOST:PORT", the port's digits only.
bool local_origin(const std::string& origin, const std::string& host) {
    const std::string base = "http://" + host;
    if (origin.compare(0, base.size(), base) != 0) return false;
    const std::string rest = origin.substr(base.size());
    if (rest.empty()) return true;
    return rest.size() >= 2 && rest.size() <= 6 && rest[0] == ':' &&
           std::all_of(rest.begin() + 1, rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool well_formed(const std::string& o) {
    const size_t scheme = o.find("://");
    if (scheme == std::string::npos || (o.compare(0, scheme, "http") != 0 && o.compare(0, scheme, "https") != 0))
        return false;
    const std::string authority = o.substr(scheme + 3);
    return !authority.empty() && authority.size() <= 253 &&
           std::all_of(authority.begin(), authority.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
           });
}

}  // namespace

CorsPolicy::CorsPolicy(const std::vector<std::string>& origins) {
    for (const std::string& o : origins) {
        if (o == "*") {
            any_ = true;
            continue;
        }
        if (!well_formed(o))
            throw std::invalid_argument("--cors takes an origin such as https://example.com or http://example.com:3000 "
                                        "(scheme, host and port, nothing after), or *; got '" + o + "'");
        origins_.push_back(o);
    }
}

bool CorsPolicy::allows(const std::string& origin) const {
    if (origin.empty()) return false;
    if (any_ || local_origin(origin, "localhost") || local_origin(origin, "127.0.0.1")) return true;
    return std::find(origins_.begin(), origins_.end(), origin) != origins_.end();
}

}  // namespace medusa::serve
