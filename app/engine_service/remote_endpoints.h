// The remote endpoints the engine thread may connect to, with their keys, as
// the GUI thread last described them. The GUI thread replaces the whole set
// whenever the Backends page changes it; the routing engine reads one entry
// when a remote model is loaded. Shared by both threads, hence the mutex.
#pragma once

#include <QString>

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "remote/endpoint.h"

namespace hearth::app {

struct RemoteEndpointEntry {
  QString name;  // shown in the model's name: "GPU box · llama-3.1-70b"
  remote::EndpointConfig config;
};

class RemoteEndpoints {
 public:
  void replace(std::map<std::string, RemoteEndpointEntry> entries) {
    std::lock_guard lock(mutex_);
    entries_ = std::move(entries);
  }
  std::optional<RemoteEndpointEntry> find(const std::string& id) const {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, RemoteEndpointEntry> entries_;  // endpoint id -> entry
};

}  // namespace hearth::app
