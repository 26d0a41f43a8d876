// The connection monitor's hang-up check against a listing the test
// controls: the real monitor thread and its scans, with the sockets it sees
// decided here (one end of a real socket pair stands for the client's
// connection, so the monitor's poll of it is real).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "connection_monitor.h"

namespace hearth::server {
namespace {

constexpr auto kLongWait = std::chrono::seconds(20);  // only for a broken build
constexpr auto kNoDeadline = std::chrono::hours(1);

// What the monitor's scans see: with `hold_first`, nothing in the first
// scan, which waits until the test has started watching (a connection
// accepted after the sockets were listed); otherwise, and after it, the
// client's socket while `open`.
struct Listing {
  std::mutex m;
  std::condition_variable cv;
  int scans = 0;
  bool hold_first = true;
  bool watched = false;
  bool open = true;
  int fd = -1;
  std::string peer;

  std::map<int, std::string> list() {
    std::unique_lock lock(m);
    ++scans;
    cv.notify_all();
    if (scans == 1 && hold_first) {
      cv.wait(lock, [&] { return watched; });
      return {};
    }
    if (!open) return {};
    return {{fd, peer}};
  }
  // Waits until the monitor has started `more` further scans.
  bool wait_scans(int more) {
    std::unique_lock lock(m);
    const int target = scans + more;
    return cv.wait_for(lock, kLongWait, [&] { return scans >= target; });
  }
};

// One end of a socket pair is the server's connection the listing shows
// (peer 127.0.0.1:40000), the other the client's.
class ConnectionMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    server_end = pair[0];
    client_end = pair[1];
    listing.fd = server_end;
    listing.peer = ConnectionMonitor::peer_key("127.0.0.1", 40000);
  }
  void TearDown() override {
    if (server_end >= 0) close(server_end);
    if (client_end >= 0) close(client_end);
  }
  int server_end = -1, client_end = -1;
  Listing listing;
  std::atomic<int> hangups{0};
};

// A request whose connection a scan's listing missed (accepted after it)
// but whose handler started watching before the scan checked its watches
// was taken as hung up, and cancelled with HTTP 499 as it began.
TEST_F(ConnectionMonitorTest, AConnectionNewerThanTheListingHasNotHungUp) {
  ConnectionMonitor monitor([&] { return listing.list(); }, kNoDeadline);
  {
    std::unique_lock lock(listing.m);
    ASSERT_TRUE(listing.cv.wait_for(lock, kLongWait, [&] { return listing.scans >= 1; }));
  }
  // The first scan has listed the sockets (without this one) and waits.
  const uint64_t id = monitor.watch("127.0.0.1", 40000, [&] { ++hangups; });
  {
    std::lock_guard lock(listing.m);
    listing.watched = true;
  }
  listing.cv.notify_all();
  // That scan finishes, and two more see the open connection.
  ASSERT_TRUE(listing.wait_scans(3));
  EXPECT_EQ(hangups.load(), 0);
  // The client goes away: a later scan must still tell.
  {
    std::lock_guard lock(listing.m);
    listing.open = false;
  }
  ASSERT_TRUE(listing.wait_scans(2));
  EXPECT_EQ(hangups.load(), 1);
  monitor.unwatch(id);
}

// The client closing its end of an open connection is a hang-up too (the
// monitor polls the socket it lists).
TEST_F(ConnectionMonitorTest, AClosedClientEndIsAHangup) {
  listing.hold_first = false;
  ConnectionMonitor monitor([&] { return listing.list(); }, kNoDeadline);
  const uint64_t id = monitor.watch("127.0.0.1", 40000, [&] { ++hangups; });
  ASSERT_TRUE(listing.wait_scans(2));
  EXPECT_EQ(hangups.load(), 0);
  close(client_end);
  client_end = -1;
  ASSERT_TRUE(listing.wait_scans(2));
  EXPECT_EQ(hangups.load(), 1);
  monitor.unwatch(id);
}

}  // namespace
}  // namespace hearth::server
