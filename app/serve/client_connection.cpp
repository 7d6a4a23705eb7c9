#include "client_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

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

// The process's open file descriptors: /proc/self/fd where there is one, else the first 1024.
std::vector<int> open_files() {
    std::vector<int> fds;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
        fds.push_back(std::atoi(it->path().filename().c_str()));
    if (fds.empty())
        for (int fd = 0; fd < 1024; ++fd) fds.push_back(fd);
    return fds;
}

}  // namespace

std::vector<ClientConnection> ClientConnection::all() {
    std::vector<ClientConnection> out;
    std::string address;
    int port = -1;
    for (const int fd : open_files())
        if (peer_of(fd, address, port)) out.push_back(ClientConnection(fd, address, port));
    return out;
}

std::optional<ClientConnection> ClientConnection::find(const std::string& address, int port) {
    // Only the server's own connections have peers; the request's is open while its handler runs.
    for (ClientConnection& c : all())
        if (c.port_ == port && c.address_ == address) return c;
    return std::nullopt;
}

bool ClientConnection::gone() const {
    char byte;
    const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return true;  // the client's end is closed
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;  // reset
}

void ClientConnection::shut_down() const { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace medusa::serve
