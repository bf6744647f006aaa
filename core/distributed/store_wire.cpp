#include "distributed/store_wire.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <thread>

#include "support/error.hpp"
#include "support/interrupt.hpp"

namespace jiasu::distributed::wire {
namespace {

constexpr uint32_t kMaxParts = 1u << 16;
constexpr uint32_t kMaxPartBytes = 1u << 30;
constexpr int kPollSliceMs = 100;  // how soon a wait notices Ctrl-C

std::string system_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void put_u32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t get_u32(const unsigned char* bytes) {
  return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
}

// Waits until the socket is readable. False when the deadline passed first.
bool wait_readable(int socket, Deadline deadline, bool interruptible) {
  if (interruptible) watch_interrupts();
  for (;;) {
    int slice = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      slice = static_cast<int>(left);
    }
    if (interruptible && (slice < 0 || slice > kPollSliceMs)) slice = kPollSliceMs;
    pollfd entry{socket, POLLIN, 0};
    const int ready = ::poll(&entry, 1, slice);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) throw DistributedError(system_error("poll"));
    if (interruptible && interrupted()) throw Interrupted("interrupted while waiting for the store");
  }
}

// Reads exactly `bytes`. False when the peer closed before the first byte and `clean_end_allowed`.
bool read_exact(int socket, char* out, size_t bytes, Deadline deadline, const std::string& peer,
                bool interruptible, bool clean_end_allowed) {
  size_t done = 0;
  while (done < bytes) {
    if (!wait_readable(socket, deadline, interruptible))
      throw DistributedTimeout("the store at " + peer + " did not answer in time");
    const ssize_t got = ::recv(socket, out + done, bytes - done, 0);
    if (got == 0) {
      if (done == 0 && clean_end_allowed) return false;
      throw DistributedError("the connection to the store at " + peer + " was closed (the process serving it, rank 0, "
                             "may have exited)");
    }
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw DistributedError(system_error(("reading from the store at " + peer).c_str()));
    }
    done += static_cast<size_t>(got);
  }
  return true;
}

// Connects `fd` without blocking past the deadline (a host that drops the packets would hold a blocking connect
// for minutes) or Ctrl-C; leaves the socket blocking. False with the reason in `error` when it did not connect.
bool connect_before(int fd, const sockaddr* address, socklen_t size, Deadline deadline, std::string& error) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int result = ::connect(fd, address, size);
  if (result != 0 && errno == EINPROGRESS) {
    pollfd entry{fd, POLLOUT, 0};
    for (;;) {
      int slice = kPollSliceMs;
      if (deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
        if (left <= 0) {
          error = "timed out";
          return false;
        }
        slice = static_cast<int>(std::min<long long>(left, kPollSliceMs));
      }
      const int ready = ::poll(&entry, 1, slice);
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) break;
      if (interrupted()) throw Interrupted("interrupted while connecting to the store");
    }
    int failure = 0;
    socklen_t length = sizeof failure;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length);
    errno = failure;
    result = failure == 0 ? 0 : -1;
  }
  if (result != 0) {
    error = std::strerror(errno);
    return false;
  }
  ::fcntl(fd, F_SETFL, flags);
  return true;
}

}  // namespace

void send_message(int socket, const std::vector<std::string>& parts, const std::string& peer) {
  std::string bytes;
  put_u32(bytes, static_cast<uint32_t>(parts.size()));
  for (const std::string& part : parts) {
    if (part.size() > kMaxPartBytes) throw BadValue("a store key or value is limited to 1 GiB");
    put_u32(bytes, static_cast<uint32_t>(part.size()));
    bytes += part;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t sent = ::send(socket, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw DistributedError(system_error(("writing to the store at " + peer).c_str()));
    }
    done += static_cast<size_t>(sent);
  }
}

std::optional<std::vector<std::string>> receive_message(int socket, Deadline deadline, const std::string& peer,
                                                        bool interruptible) {
  unsigned char header[4];
  if (!read_exact(socket, reinterpret_cast<char*>(header), 4, deadline, peer, interruptible, true)) return std::nullopt;
  const uint32_t count = get_u32(header);
  if (count > kMaxParts) throw DistributedError("a malformed message from " + peer);
  std::vector<std::string> parts(count);
  for (std::string& part : parts) {
    read_exact(socket, reinterpret_cast<char*>(header), 4, deadline, peer, interruptible, false);
    const uint32_t length = get_u32(header);
    if (length > kMaxPartBytes) throw DistributedError("a malformed message from " + peer);
    part.resize(length);
    if (length) read_exact(socket, part.data(), length, deadline, peer, interruptible, false);
  }
  return parts;
}

int listen_on(int port) {
  if (port < 0 || port > 65535) throw BadValue("a port is from 0 to 65535, not " + std::to_string(port));
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool six = fd >= 0;
  if (!six) fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw DistributedError(system_error("socket"));
  const int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int bound;
  if (six) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  }
  if (bound != 0 || ::listen(fd, 1024) != 0) {
    const std::string message = system_error(("the store cannot listen on port " + std::to_string(port)).c_str());
    ::close(fd);
    throw DistributedError(message);
  }
  return fd;
}

int local_port(int socket) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &size) != 0)
    throw DistributedError(system_error("getsockname"));
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

int connect_to(const std::string& host, int port, Deadline deadline) {
  if (port <= 0 || port > 65535) throw BadValue("a store's port is from 1 to 65535, not " + std::to_string(port));
  const std::string peer = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error;
  watch_interrupts();
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    addrinfo* found = nullptr;
    const int looked_up = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (looked_up != 0) {
      last_error = std::string("cannot resolve '") + host + "': " + gai_strerror(looked_up);
    } else {
      for (addrinfo* entry = found; entry; entry = entry->ai_next) {
        const int fd = ::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol);
        if (fd < 0) continue;
        if (connect_before(fd, entry->ai_addr, entry->ai_addrlen, deadline, last_error)) {
          ::freeaddrinfo(found);
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          return fd;
        }
        ::close(fd);
      }
      ::freeaddrinfo(found);
    }
    if (deadline && Clock::now() + pause >= *deadline)
      throw DistributedTimeout("could not reach the store at " + peer + " in time (" + last_error +
                               "): is rank 0 running, and are MASTER_ADDR and MASTER_PORT right?");
    std::this_thread::sleep_for(pause);
    if (interrupted()) throw Interrupted("interrupted while connecting to the store at " + peer);
  }
}

}  // namespace jiasu::distributed::wire
