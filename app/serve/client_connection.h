// The socket of the client that sent a request, found by its address: a handler that answers
// only when its generation ends (a whole, non-streamed reply) looks there between steps to see
// whether its client has gone, as a stream's writes show it. The HTTP library does not give its
// handlers the socket, so it is found among the process's sockets by the peer's address and port.
#pragma once
#include <optional>
#include <string>

namespace medusa::serve {

class ClientConnection {
public:
    // The socket connected to `address` ("127.0.0.1", "::1") port `port`; nullopt when none is.
    static std::optional<ClientConnection> find(const std::string& address, int port);
    // The client closed its end (an orderly close or a reset): nothing it sends will come.
    bool gone() const;
    int socket() const { return fd_; }

private:
    explicit ClientConnection(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace medusa::serve
