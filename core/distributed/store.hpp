// The rendezvous of jiasu.distributed: a small TCP key-value store, as torchrun's. Rank 0 runs the server in its
// own process (a thread per connection); every rank, rank 0 too, talks to it through a client. It carries the
// NCCL unique id from rank 0 to the others, and barriers. Every wait has a deadline: a peer that never comes
// raises DistributedTimeout, a server that went away raises DistributedError, Ctrl-C raises Interrupted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace jiasu::distributed {

// Listens on every interface at `port` (0: a free one) and answers clients until destroyed. The destructor first
// waits up to linger_s for the clients to hang up: rank 0 leaving the last barrier must not cut off the replies
// still on their way to the others.
class StoreServer {
 public:
  explicit StoreServer(int port, double linger_s = 0);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  int port() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// One connection to a server; requests from several threads take turns. A request that ended before its reply
// (a timeout on this side, Ctrl-C) leaves the reply on the way, so the connection is dropped and the next request
// makes a new one; once the server is gone, every request fails at once.
class StoreClient {
 public:
  // Retries the connection until timeout_s has passed (rank 0's server may start after the others).
  StoreClient(const std::string& host, int port, double timeout_s);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void set(const std::string& key, const std::string& value);
  // Waits until the key exists, up to the client's timeout.
  std::string get(const std::string& key);
  // Adds to the integer stored under key (0 when absent) and returns the sum.
  int64_t add(const std::string& key, int64_t amount);
  bool check(const std::vector<std::string>& keys);
  bool delete_key(const std::string& key);
  // Waits until every key exists, up to timeout_s (< 0: the client's timeout).
  void wait(const std::vector<std::string>& keys, double timeout_s = -1);
  // Returns once world_size clients have entered the barrier of this name as often as this one has.
  void barrier(const std::string& name, int world_size);

  double timeout() const { return timeout_s_; }
  const std::string& address() const { return address_; }  // "host:port", for messages
  // Ends the request another thread may be waiting in (it raises); the client is not usable after.
  void shut_down();

 private:
  std::vector<std::string> request(std::vector<std::string> message, double timeout_s);

  std::mutex mutex_;  // one request at a time
  std::atomic<int> socket_{-1};
  bool lost_ = false;  // the server closed the connection or broke it: every later request fails at once
  std::string host_;
  int port_;
  double timeout_s_;
  std::string address_;
  std::mutex barriers_mutex_;
  std::vector<std::pair<std::string, int64_t>> barriers_;  // how often each barrier was passed
};

// A store as the Python side sees it: the server when this process is the master, and a client to it.
class TcpStore {
 public:
  // world_size: how many ranks a barrier waits for (0: unknown, then barrier() needs to be told).
  TcpStore(const std::string& host, int port, int world_size, bool is_master, double timeout_s);
  std::shared_ptr<StoreClient> client();  // throws BadValue once closed
  // Closes the connection, and stops the server when this process runs it.
  void close();
  int port() const { return port_; }
  int world_size() const { return world_size_; }
  bool is_master() const { return is_master_; }
  void barrier(const std::string& name);

 private:
  std::mutex mutex_;  // guards client_ against close() from another thread
  std::unique_ptr<StoreServer> server_;  // declared first: destroyed after the client
  std::shared_ptr<StoreClient> client_;  // shared with the requests under way, which close() ends
  int port_;
  int world_size_;
  bool is_master_;
};

}  // namespace jiasu::distributed
