// The store's client: one request, one reply. A request that waits tells the server its timeout; the client
// waits a little longer for the reply, so that the server's "timeout" answer normally comes first and a server
// that died is still noticed.
#include "distributed/store.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <optional>

#include "distributed/store_wire.hpp"
#include "support/error.hpp"
#include "support/text.hpp"

namespace jiasu::distributed {
namespace {

constexpr double kReplySlackS = 5.0;
constexpr double kLingerS = 10.0;  // how long a master's server waits, when closed, for the other ranks to hang up

std::string milliseconds(double seconds) { return std::to_string(static_cast<int64_t>(std::ceil(seconds * 1000))); }

void check_timeout(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw BadValue(format("a store timeout is a positive number of seconds, not %g", seconds));
}

std::string seconds_text(double seconds) { return format("%g s", seconds); }

std::string quoted_keys(const std::vector<std::string>& keys) {
  std::string text;
  for (const std::string& key : keys) text += (text.empty() ? "'" : ", '") + key + "'";
  return text;
}

}  // namespace

StoreClient::StoreClient(const std::string& host, int port, double timeout_s)
    : host_(host), port_(port), timeout_s_(timeout_s), address_(host + ":" + std::to_string(port)) {
  check_timeout(timeout_s);
  socket_ = wire::connect_to(host, port, deadline_after(timeout_s));
}

StoreClient::~StoreClient() {
  if (socket_ >= 0) ::close(socket_);
}

void StoreClient::shut_down() {
  if (const int fd = socket_.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);  // the fd is closed only under mutex_
}

std::vector<std::string> StoreClient::request(std::vector<std::string> message, double timeout_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lost_) throw DistributedError("the connection to the store at " + address_ + " was lost earlier (rank 0, which "
                                    "serves it, may have exited)");
  if (socket_ < 0) socket_ = wire::connect_to(host_, port_, deadline_after(timeout_s_));
  std::optional<std::vector<std::string>> reply;
  try {
    wire::send_message(socket_, message, address_);
    reply = wire::receive_message(socket_, deadline_after(timeout_s + kReplySlackS), address_, true);
  } catch (const Interrupted&) {
    ::close(socket_.exchange(-1));  // the reply may still come: the next request makes a new connection
    throw;
  } catch (const DistributedTimeout&) {
    ::close(socket_.exchange(-1));
    throw;
  } catch (...) {
    lost_ = true;
    ::close(socket_.exchange(-1));
    throw;
  }
  if (!reply) {
    lost_ = true;
    throw DistributedError("the store at " + address_ + " closed the connection (rank 0, which serves it, may have "
                           "exited)");
  }
  if (reply->empty()) throw DistributedError("a malformed reply from the store at " + address_);
  if ((*reply)[0] == "error") throw DistributedError("the store at " + address_ + ": " + reply->back());
  return *reply;
}

void StoreClient::set(const std::string& key, const std::string& value) { request({"set", key, value}, timeout_s_); }

std::string StoreClient::get(const std::string& key) {
  auto reply = request({"get", key, milliseconds(timeout_s_)}, timeout_s_);
  if (reply[0] == "timeout" || reply.size() < 2)
    throw DistributedTimeout("the store at " + address_ + " has no key '" + key + "' after waiting " +
                             seconds_text(timeout_s_) + ": a peer did not arrive or set it");
  return reply[1];
}

int64_t StoreClient::add(const std::string& key, int64_t amount) {
  auto reply = request({"add", key, std::to_string(amount)}, timeout_s_);
  if (reply.size() < 2) throw DistributedError("a malformed reply from the store at " + address_);
  return std::stoll(reply[1]);
}

bool StoreClient::check(const std::vector<std::string>& keys) {
  std::vector<std::string> message{"check"};
  message.insert(message.end(), keys.begin(), keys.end());
  auto reply = request(std::move(message), timeout_s_);
  return reply.size() > 1 && reply[1] == "1";
}

bool StoreClient::delete_key(const std::string& key) {
  auto reply = request({"delete", key}, timeout_s_);
  return reply.size() > 1 && reply[1] == "1";
}

void StoreClient::wait(const std::vector<std::string>& keys, double timeout_s) {
  if (timeout_s < 0) timeout_s = timeout_s_;
  check_timeout(timeout_s);
  std::vector<std::string> message{"wait", milliseconds(timeout_s)};
  message.insert(message.end(), keys.begin(), keys.end());
  if (request(std::move(message), timeout_s)[0] == "timeout")
    throw DistributedTimeout("the store at " + address_ + " still lacks " + quoted_keys(keys) + " after " +
                             seconds_text(timeout_s) + ": a peer did not arrive or set it");
}

void StoreClient::barrier(const std::string& name, int world_size) {
  if (world_size < 1) throw BadValue("a barrier needs a world size of at least 1, not " + std::to_string(world_size));
  int64_t use = 0;
  {
    std::lock_guard<std::mutex> lock(barriers_mutex_);
    int64_t* passed = nullptr;
    for (auto& entry : barriers_)
      if (entry.first == name) passed = &entry.second;
    if (!passed) passed = &barriers_.emplace_back(name, 0).second;
    use = (*passed)++;
  }
  // Each use of the barrier has its own keys, so that a fast rank's next barrier cannot count as this one.
  const std::string prefix = "jiasu/barrier/" + name + "/" + std::to_string(use);
  if (add(prefix + "/arrived", 1) == world_size) return set(prefix + "/open", "1");  // the last to arrive
  try {
    wait({prefix + "/open"});
  } catch (const DistributedTimeout&) {
    const std::string arrived = std::to_string(add(prefix + "/arrived", 0));
    throw DistributedTimeout("barrier '" + name + "': only " + arrived + " of " + std::to_string(world_size) +
                             " ranks arrived within " + seconds_text(timeout_s_));
  }
}

TcpStore::TcpStore(const std::string& host, int port, int world_size, bool is_master, double timeout_s)
    : world_size_(world_size), is_master_(is_master) {
  check_timeout(timeout_s);
  if (world_size < 0) throw BadValue("a world size is at least 1, not " + std::to_string(world_size));
  if (is_master) server_ = std::make_unique<StoreServer>(port, kLingerS);
  port_ = server_ ? server_->port() : port;
  client_ = std::make_shared<StoreClient>(host, port_, timeout_s);
}

void TcpStore::barrier(const std::string& name) {
  if (world_size_ < 1) throw BadValue("this store was made without a world_size, which a barrier needs");
  client()->barrier(name, world_size_);
}

std::shared_ptr<StoreClient> TcpStore::client() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!client_) throw BadValue("this store is closed");
  return client_;
}

void TcpStore::close() {
  std::unique_ptr<StoreServer> server;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (client_) client_->shut_down();
    client_.reset();
    server = std::move(server_);
  }
  server.reset();  // unlocked: it waits for the other ranks to hang up
}

}  // namespace jiasu::distributed
