#include "server/connection_probe.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace verdict::server {
namespace {

bool endpoint_of(int fd, bool peer, std::string& addr, int& port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (rc != 0 || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) return false;
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  addr = host;
  port = std::atoi(serv);
  return true;
}

}  // namespace

ConnectionProbe::ConnectionProbe(std::string remote_addr, int remote_port, std::string local_addr, int local_port)
    : remote_addr_(std::move(remote_addr)), local_addr_(std::move(local_addr)), remote_port_(remote_port),
      local_port_(local_port) {}

int ConnectionProbe::find_socket() const {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    std::string addr;
    int port = 0;
    if (!endpoint_of(static_cast<int>(fd), true, addr, port) || port != remote_port_ || addr != remote_addr_) continue;
    if (!endpoint_of(static_cast<int>(fd), false, addr, port) || port != local_port_) continue;
    found = static_cast<int>(fd);
    break;
  }
  ::closedir(dir);
  return found;
}

int ConnectionProbe::socket() {
  if (fd_ == -2) fd_ = find_socket();
  return fd_;
}

void ConnectionProbe::shut_down() {
  if (socket() >= 0) ::shutdown(fd_, SHUT_RDWR);
}

bool ConnectionProbe::connected() {
  if (socket() < 0) return true;
  pollfd p{};
  p.fd = fd_;
  p.events = POLLRDHUP;
  if (::poll(&p, 1, 0) <= 0) return true;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

}  // namespace verdict::server
