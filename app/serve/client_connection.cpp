#include "client_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cerrno>

namespace medusa::serve {

namespace {

// The peer of `fd` as text and port, when it is a connected IPv4 or IPv6 socket.
bool peer_of(int fd, std::string& address, int& port) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
    char text[INET6_ADDRSTRLEN] = {};
    if (peer.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
        if (!inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) return false;
        port = ntohs(in->sin_port);
    } else if (peer.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
        if (!inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text)) return false;
        port = ntohs(in6->sin6_port);
    } else {
        return false;
    }
    address = text;
    return true;
}

}  // namespace

std::optional<ClientConnection> ClientConnection::find(const std::string& address, int port) {
    rlimit limit{};
    const int most = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536 ? int(limit.rlim_cur) : 65536;
    std::string a;
    int p = -1;
    // Only the server's own connections have peers; the request's is open while its handler runs.
    for (int fd = 0; fd < most; ++fd)
        if (peer_of(fd, a, p) && p == port && a == address) return ClientConnection(fd);
    return std::nullopt;
}

bool ClientConnection::gone() const {
    char byte;
    const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return true;  // the client's end is closed
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;  // reset
}

}  // namespace medusa::serve
