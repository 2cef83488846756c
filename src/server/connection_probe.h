// Whether the client of a request is still connected, for requests that wait for the model.
//
// cpp-httplib 0.11 does not expose the connection of a request. The probe finds the socket by its
// address pair among the process's descriptors (the socket belongs to the request's thread until
// the response is written, so the descriptor is stable meanwhile) and polls it for a hang-up.
#pragma once
#include <string>

namespace verdict::server {

class ConnectionProbe {
 public:
  ConnectionProbe(std::string remote_addr, int remote_port, std::string local_addr, int local_port);

  // False once the peer closed the connection. True when the socket cannot be identified.
  bool connected();
  // Shuts the connection down in both directions (after its response was written).
  void shut_down();

 private:
  int socket();
  int find_socket() const;

  std::string remote_addr_, local_addr_;
  int remote_port_, local_port_;
  int fd_ = -2;  // -2: not looked up yet; -1: not found
};

}  // namespace verdict::server
