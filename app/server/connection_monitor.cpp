#include "connection_monitor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

namespace hearth::server {
namespace {

constexpr auto kScanInterval = std::chrono::milliseconds(100);

// The address as cpp-httplib writes req.remote_addr (numeric) and the port.
bool endpoint_of(const sockaddr_storage& sa, std::string& addr, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
    if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf) == nullptr) return false;
    port = ntohs(in->sin_port);
  } else if (sa.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
    if (inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf) == nullptr) return false;
    port = ntohs(in6->sin6_port);
  } else {
    return false;
  }
  addr = buf;
  return true;
}

// The connected sockets whose local port is `port`: fd -> peer key.
std::map<int, std::string> connections_on_port(int port) {
  std::map<int, std::string> out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  std::vector<int> fds;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && fd != dirfd(dir)) fds.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  for (int fd : fds) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) continue;
    std::string addr;
    int local_port = 0;
    if (!endpoint_of(local, addr, local_port) || local_port != port) continue;
    int listening = 0;
    socklen_t optlen = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0 || listening != 0) continue;
    sockaddr_storage peer{};
    len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    int peer_port = 0;
    if (!endpoint_of(peer, addr, peer_port)) continue;
    out[fd] = ConnectionMonitor::peer_key(addr, peer_port);
  }
  return out;
}

}  // namespace

std::string ConnectionMonitor::peer_key(const std::string& addr, int port) {
  return addr + "|" + std::to_string(port);
}

ConnectionMonitor::ConnectionMonitor(int port, std::chrono::milliseconds request_deadline)
    : ConnectionMonitor([port] { return connections_on_port(port); }, request_deadline) {}

ConnectionMonitor::ConnectionMonitor(Listing listing, std::chrono::milliseconds request_deadline)
    : listing_(std::move(listing)), deadline_(request_deadline) {
  thread_ = std::thread([this] { loop(); });
}

ConnectionMonitor::~ConnectionMonitor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t ConnectionMonitor::watch(const std::string& addr, int port, std::function<void()> on_hangup) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  const std::string key = peer_key(addr, port);
  const auto now = std::chrono::steady_clock::now();
  watches_[id] = Watch{key, std::move(on_hangup), now};
  served_[key] = now;
  return id;
}

void ConnectionMonitor::unwatch(uint64_t id) {
  std::lock_guard lock(mutex_);
  watches_.erase(id);
}

int64_t ConnectionMonitor::expired() const {
  std::lock_guard lock(mutex_);
  return expired_;
}

void ConnectionMonitor::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kScanInterval, [&] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    scan();
    lock.lock();
  }
}

void ConnectionMonitor::scan() {
  const auto now = std::chrono::steady_clock::now();
  const auto live = listing_();
  std::vector<std::function<void()>> hangups;
  {
    std::lock_guard lock(mutex_);
    // Forget closed connections (and descriptors reused by another peer).
    for (auto it = conns_.begin(); it != conns_.end();) {
      auto l = live.find(it->first);
      it = (l == live.end() || l->second != it->second.peer) ? conns_.erase(it) : std::next(it);
    }
    std::set<std::string> live_peers;
    for (const auto& [fd, peer] : live) {
      live_peers.insert(peer);
      auto [it, added] = conns_.try_emplace(fd, Conn{peer, now, false});
      Conn& c = it->second;
      if (c.shut || served_.count(peer) != 0) continue;
      if (now - c.seen > deadline_) {
        // The blocked read in cpp-httplib fails at once and the connection closes.
        shutdown(fd, SHUT_RDWR);
        c.shut = true;
        ++expired_;
      }
    }
    // A peer served since the listing began may be missing from it while
    // open (as for the watches below): kept until a later scan.
    for (auto it = served_.begin(); it != served_.end();) {
      it = live_peers.count(it->first) == 0 && it->second < now ? served_.erase(it) : std::next(it);
    }
    for (auto& [id, w] : watches_) {
      if (!w.on_hangup) continue;
      for (const auto& [fd, peer] : live) {
        if (peer != w.peer) continue;
        pollfd p{fd, static_cast<short>(POLLRDHUP), 0};
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
          hangups.push_back(std::move(w.on_hangup));
          w.on_hangup = nullptr;
        }
      }
      // A watched peer whose socket is gone has hung up too, if the watch
      // began before the sockets were listed: a connection accepted after
      // the listing, whose handler started watching before this check, is
      // missing from it while open. Counted as gone, its request was
      // cancelled (HTTP 499) as soon as it began; a loaded machine widened
      // that window enough for a test's plain request to meet it.
      if (w.on_hangup && w.since < now && live_peers.count(w.peer) == 0) {
        hangups.push_back(std::move(w.on_hangup));
        w.on_hangup = nullptr;
      }
    }
  }
  for (auto& h : hangups) h();
}

}  // namespace hearth::server
