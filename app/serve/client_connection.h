// The sockets of the clients connected to this process, found by their peers' addresses: the HTTP
// library gives its handlers neither the socket nor a way to bound how long a client may take to
// send its request, so the server finds them among its open files. A handler that answers only
// when its generation ends (a whole, non-streamed reply) looks there to see whether its client
// has gone; RequestDeadlines drops connections whose request takes too long.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace medusa::serve {

class ClientConnection {
public:
    // Every open socket connected to an IPv4 or IPv6 peer.
    static std::vector<ClientConnection> all();
    // The one connected to `address` ("127.0.0.1", "::1") port `port`; nullopt when none is.
    static std::optional<ClientConnection> find(const std::string& address, int port);
    // The client closed its end (an orderly close or a reset): nothing it sends will come.
    bool gone() const;
    // Ends the connection both ways; its owner's reads and writes fail and it closes the socket.
    void shut_down() const;
    int socket() const { return fd_; }
    const std::string& address() const { return address_; }
    int port() const { return port_; }

private:
    ClientConnection(int fd, std::string address, int port) : fd_(fd), address_(std::move(address)), port_(port) {}
    int fd_ = -1;
    std::string address_;
    int port_ = -1;
};

}  // namespace medusa::serve
