// The store's server: an accepting thread and a thread per connection, over one map guarded by a mutex. A
// request that waits for keys (get, wait) sleeps on a condition variable until a set or add brings them, or its
// deadline (the client's timeout, sent with the request) passes.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store.hpp"
#include "distributed/store_wire.hpp"
#include "support/error.hpp"

namespace jiasu::distributed {

struct StoreServer::State {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::string> values;
  bool closing = false;   // no new connections
  bool stopping = false;  // the connections end
  int listener = -1;
  int port = 0;
  double linger_s = 0;
  std::thread acceptor;
  struct Connection {
    int socket;
    std::thread thread;
  };
  std::vector<Connection> connections;  // socket -1 once its thread closed it

  void accept_loop();
  void serve(size_t index);
  std::vector<std::string> answer(const std::vector<std::string>& request, int socket);
  bool wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, double timeout_ms,
                int socket);
};

namespace {

bool all_present(const std::map<std::string, std::string>& values, const std::vector<std::string>& keys, size_t from) {
  for (size_t i = from; i < keys.size(); ++i)
    if (!values.count(keys[i])) return false;
  return true;
}

double number(const std::string& text) {
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    throw DistributedError("a malformed store request: '" + text + "' is not a number");
  }
}

}  // namespace

void StoreServer::State::accept_loop() {
  for (;;) {
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mutex);
    if (closing) {
      if (client >= 0) ::close(client);
      return;
    }
    if (client < 0) continue;  // a client that gave up before we accepted it, or EINTR
    connections.push_back({client, std::thread()});
    connections.back().thread = std::thread(&State::serve, this, connections.size() - 1);
  }
}

void StoreServer::State::serve(size_t index) {
  int socket;
  {
    std::lock_guard<std::mutex> lock(mutex);
    socket = connections[index].socket;
  }
  const std::string peer = "a client of the store";
  try {
    while (auto request = wire::receive_message(socket, std::nullopt, peer, false))
      wire::send_message(socket, answer(*request, socket), peer);
  } catch (const std::exception&) {
    // The client went away mid-message, or the server is stopping: either way this connection is over.
  }
  std::lock_guard<std::mutex> lock(mutex);
  ::close(socket);
  connections[index].socket = -1;
  changed.notify_all();  // the destructor may be waiting for the clients to hang up
}

// Waits until the keys exist (true), or the deadline passes, the server stops or the client hangs up (false): a
// client that went away must not keep its request, and so the server's linger, waiting.
bool StoreServer::State::wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                                  double timeout_ms, int socket) {
  const Clock::time_point deadline = deadline_after(timeout_ms / 1000);
  for (;;) {
    const auto slice = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
    if (changed.wait_until(lock, slice, [&] { return stopping || all_present(values, keys, 0); })) return !stopping;
    if (Clock::now() >= deadline) return false;
    char byte;
    if (::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return false;  // the client hung up
  }
}

std::vector<std::string> StoreServer::State::answer(const std::vector<std::string>& request, int socket) {
  auto needs = [&](size_t parts) {
    if (request.size() < parts) throw DistributedError("a malformed store request");
  };
  needs(1);
  const std::string& command = request[0];
  std::unique_lock<std::mutex> lock(mutex);
  if (command == "set") {
    needs(3);
    values[request[1]] = request[2];
    changed.notify_all();
    return {"ok"};
  }
  if (command == "get") {  // get KEY TIMEOUT_MS
    needs(3);
    if (!wait_for(lock, {request[1]}, number(request[2]), socket)) return {"timeout"};
    return {"ok", values[request[1]]};
  }
  if (command == "add") {  // add KEY AMOUNT
    needs(3);
    std::string& value = values[request[1]];
    int64_t sum;
    try {
      sum = (value.empty() ? 0 : std::stoll(value)) + std::stoll(request[2]);
    } catch (const std::exception&) {
      return {"error", "the value under '" + request[1] + "' is not an integer"};
    }
    value = std::to_string(sum);
    changed.notify_all();
    return {"ok", value};
  }
  if (command == "check") {  // check KEY...
    return {"ok", all_present(values, request, 1) ? "1" : "0"};
  }
  if (command == "delete") {  // delete KEY
    needs(2);
    return {"ok", values.erase(request[1]) ? "1" : "0"};
  }
  if (command == "wait") {  // wait TIMEOUT_MS KEY...
    needs(2);
    if (!wait_for(lock, std::vector<std::string>(request.begin() + 2, request.end()), number(request[1]), socket))
      return {"timeout"};
    return {"ok"};
  }
  return {"error", "unknown store command '" + command + "'"};
}

StoreServer::StoreServer(int port, double linger_s) : state_(std::make_unique<State>()) {
  state_->linger_s = linger_s;
  state_->listener = wire::listen_on(port);
  state_->port = wire::local_port(state_->listener);
  state_->acceptor = std::thread(&State::accept_loop, state_.get());
}

StoreServer::~StoreServer() {
  // First no new connections (a rank that connects again, for its next init, waits for the next server), then
  // the linger for the clients still connected, then the end of their connections.
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->closing = true;
    ::shutdown(state_->listener, SHUT_RDWR);  // wakes accept()
  }
  state_->acceptor.join();
  ::close(state_->listener);
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->changed.wait_for(lock, std::chrono::duration<double>(state_->linger_s), [&] {
      for (const State::Connection& connection : state_->connections)
        if (connection.socket >= 0) return false;
      return true;
    });
    state_->stopping = true;
    for (const State::Connection& connection : state_->connections)
      if (connection.socket >= 0) ::shutdown(connection.socket, SHUT_RDWR);  // wakes recv()
    state_->changed.notify_all();  // wakes waiting requests
  }
  // No thread is added once the acceptor has returned, so the list is stable here.
  for (State::Connection& connection : state_->connections) connection.thread.join();
}

int StoreServer::port() const { return state_->port; }

}  // namespace jiasu::distributed
