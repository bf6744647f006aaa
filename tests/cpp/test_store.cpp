// The rendezvous store: values travel between clients, waits end when a key arrives or at the deadline, add is
// atomic across clients, a barrier holds every rank until the last arrives (and can be used again), a master
// waits for its clients to hang up before it stops serving, and a server that goes away is an error, not a hang.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "distributed/store.hpp"
#include "support/error.hpp"

namespace jiasu::distributed {
namespace {

using std::chrono::steady_clock;

double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

TEST(Store, ValuesTravelBetweenClients) {
  StoreServer server(0);
  ASSERT_GT(server.port(), 0);
  StoreClient a("127.0.0.1", server.port(), 5), b("localhost", server.port(), 5);
  const std::string binary("\0\1\2\xff", 4);
  a.set("id", binary);
  EXPECT_EQ(b.get("id"), binary);
  a.set("id", "");
  EXPECT_EQ(b.get("id"), "");
  EXPECT_TRUE(b.check({"id"}));
  EXPECT_FALSE(b.check({"id", "other"}));
  EXPECT_TRUE(b.delete_key("id"));
  EXPECT_FALSE(a.delete_key("id"));
  EXPECT_FALSE(a.check({"id"}));
}

TEST(Store, GetWaitsForTheKey) {
  StoreServer server(0);
  StoreClient reader("127.0.0.1", server.port(), 10);
  std::thread writer([&] {
    StoreClient client("127.0.0.1", server.port(), 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    client.set("late", "here");
  });
  const auto start = steady_clock::now();
  EXPECT_EQ(reader.get("late"), "here");
  EXPECT_GE(seconds_since(start), 0.25);
  writer.join();
}

TEST(Store, WaitsEndAtTheirDeadline) {
  StoreServer server(0);
  StoreClient client("127.0.0.1", server.port(), 0.5);
  auto start = steady_clock::now();
  EXPECT_THROW(client.get("never"), DistributedTimeout);
  EXPECT_NEAR(seconds_since(start), 0.5, 0.4);
  start = steady_clock::now();
  EXPECT_THROW(client.wait({"never"}, 0.2), DistributedTimeout);
  EXPECT_NEAR(seconds_since(start), 0.2, 0.3);
  EXPECT_THROW(client.wait({"never"}, 0), BadValue);
}

TEST(Store, AddIsAtomicAcrossClients) {
  StoreServer server(0);
  constexpr int kClients = 8, kAdds = 50;
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&] {
      StoreClient client("127.0.0.1", server.port(), 10);
      for (int j = 0; j < kAdds; ++j) client.add("count", 1);
    });
  for (auto& thread : threads) thread.join();
  StoreClient client("127.0.0.1", server.port(), 10);
  EXPECT_EQ(client.add("count", 0), kClients * kAdds);
  EXPECT_EQ(client.add("count", -kClients * kAdds), 0);
  client.set("text", "abc");
  EXPECT_THROW(client.add("text", 1), DistributedError);
}

TEST(Store, ThreadsShareAClientAndCloseEndsTheirWaits) {
  TcpStore master("127.0.0.1", 0, 1, true, 30);
  std::shared_ptr<StoreClient> client = master.client();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 50; ++j) client->add("count", 1);
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(client->add("count", 0), 200);
  // A wait for a key that never comes ends when the store is closed, long before its 30 s timeout.
  const auto start = steady_clock::now();
  std::thread waiter([held = client] { EXPECT_THROW(held->get("never"), DistributedError); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  client.reset();
  master.close();
  waiter.join();
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST(Store, BarrierHoldsEveryRankUntilTheLastAndCanBeReused) {
  StoreServer server(0);
  constexpr int kRanks = 4, kRounds = 3;
  std::atomic<int> arrived[kRounds] = {};
  std::atomic<int> early{0};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank)
    ranks.emplace_back([&, rank] {
      StoreClient client("127.0.0.1", server.port(), 10);
      for (int round = 0; round < kRounds; ++round) {
        if (rank == kRanks - 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the last to come
        arrived[round]++;
        client.barrier("step", kRanks);
        if (arrived[round].load() != kRanks) early++;  // left before every rank had arrived
      }
    });
  for (auto& rank : ranks) rank.join();
  EXPECT_EQ(early.load(), 0);
}

TEST(Store, BarrierTimesOutNamingWhoArrived) {
  StoreServer server(0);
  StoreClient client("127.0.0.1", server.port(), 0.3);
  try {
    client.barrier("lonely", 3);
    FAIL() << "a barrier of 3 passed with 1 rank";
  } catch (const DistributedTimeout& error) {
    EXPECT_NE(std::string(error.what()).find("only 1 of 3 ranks"), std::string::npos) << error.what();
  }
}

TEST(Store, AServerThatWentAwayIsAnError) {
  auto server = std::make_unique<StoreServer>(0);
  StoreClient client("127.0.0.1", server->port(), 5);
  client.set("k", "v");
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    server.reset();  // also ends the get below, which waits on the server
  });
  const auto start = steady_clock::now();
  EXPECT_THROW(client.get("never"), DistributedError);
  EXPECT_LT(seconds_since(start), 4.0);
  stopper.join();
  const auto again = steady_clock::now();
  EXPECT_THROW(client.set("k", "v"), DistributedError);  // at once: no new connection is tried
  EXPECT_LT(seconds_since(again), 1.0);
}

TEST(Store, NoServerMeansATimeoutNamingTheAddress) {
  int port;
  {
    StoreServer server(0);
    port = server.port();
  }
  const auto start = steady_clock::now();
  try {
    StoreClient client("127.0.0.1", port, 0.4);
    FAIL() << "connected to a server that was stopped";
  } catch (const DistributedTimeout& error) {
    EXPECT_NE(std::string(error.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos);
  }
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_THROW(StoreServer(70000), BadValue);
}

TEST(Store, TcpStoreServesItselfAndStopsOnClose) {
  TcpStore master("127.0.0.1", 0, 2, true, 5);
  TcpStore other("127.0.0.1", master.port(), 2, false, 5);
  EXPECT_TRUE(master.is_master());
  EXPECT_FALSE(other.is_master());
  std::thread peer([&] { other.barrier("start"); });
  master.barrier("start");
  peer.join();
  other.client()->set("x", "1");
  EXPECT_EQ(master.client()->get("x"), "1");
  // Closing the master waits for the others to hang up (their last replies may still be on the way).
  std::thread hang_up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    other.close();
  });
  const auto start = steady_clock::now();
  std::thread closer([&] { master.close(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // While it waits, it takes no new connections: a rank's next init must not find this store.
  EXPECT_THROW(StoreClient("127.0.0.1", master.port(), 0.1), DistributedTimeout);
  closer.join();
  EXPECT_GE(seconds_since(start), 0.25);
  EXPECT_LT(seconds_since(start), 5.0);
  hang_up.join();
  EXPECT_THROW(master.client(), BadValue);
  TcpStore unsized("127.0.0.1", 0, 0, true, 5);
  EXPECT_THROW(unsized.barrier("b"), BadValue);
}

}  // namespace
}  // namespace jiasu::distributed
