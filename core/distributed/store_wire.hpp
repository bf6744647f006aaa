// The store's wire format and socket helpers, shared by its server and client. A message is a list of byte
// strings: a 32-bit count, then each string as a 32-bit length and its bytes (little-endian). A request's first
// string names the command; a reply's first string is "ok", "timeout" or "error", then the results.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "distributed/deadline.hpp"

namespace jiasu::distributed::wire {

using Deadline = std::optional<Clock::time_point>;  // nullopt: wait for ever (the server's side)

// Throws DistributedError (naming `peer`) when the connection fails.
void send_message(int socket, const std::vector<std::string>& parts, const std::string& peer);

// The next message, or nullopt once the peer closed the connection cleanly between messages. Throws
// DistributedTimeout when the deadline passes, DistributedError on a broken or malformed stream, and Interrupted
// on Ctrl-C when `interruptible`.
std::optional<std::vector<std::string>> receive_message(int socket, Deadline deadline, const std::string& peer,
                                                        bool interruptible);

// A listening socket on every interface (IPv6 with IPv4 mapped where the host has IPv6), at `port` (0: any).
int listen_on(int port);
int local_port(int socket);

// A connected socket to host:port, retried until the deadline (the server may not be up yet).
int connect_to(const std::string& host, int port, Deadline deadline);

}  // namespace jiasu::distributed::wire
