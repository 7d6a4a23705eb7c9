// Which web pages may call the server from a browser (CORS). A page on any site a browser opens
// could otherwise send requests to a server on this machine, so by default only pages served from
// this machine may: http://localhost and http://127.0.0.1, on any port. `medusa serve --cors
// ORIGIN` allows another origin (the flag repeats, or takes a comma-separated list), `--cors '*'`
// every one.
#pragma once
#include <string>
#include <vector>

namespace medusa::serve {

class CorsPolicy {
public:
    CorsPolicy() = default;
    // Each of `origins` is "*" or scheme://host[:port] with the scheme http or https and nothing
    // after the port; throws std::invalid_argument naming the first that is not.
    explicit CorsPolicy(const std::vector<std::string>& origins);
    // Whether a page of `origin` (a request's Origin header) may read the server's replies.
    bool allows(const std::string& origin) const;

private:
    std::vector<std::string> origins_;
    bool any_ = false;
};

}  // namespace medusa::serve
