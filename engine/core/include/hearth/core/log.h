// The engine logs through a callback the application installs, so the engine
// library itself carries no logging framework and no global sinks.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string_view>
#include <utility>

namespace hearth {

enum class LogLevel { Trace, Debug, Info, Warn, Error };

const char* to_string(LogLevel level);

using LogCallback = std::function<void(LogLevel, std::string_view message)>;

// A cheap, copyable handle passed to engine components that want to log.
// A default-constructed Logger discards everything.
class Logger {
 public:
  Logger() = default;
  explicit Logger(LogCallback callback, LogLevel min_level = LogLevel::Info)
      : callback_(std::move(callback)), min_level_(min_level) {}

  bool enabled(LogLevel level) const { return callback_ && level >= min_level_; }

  template <typename... Args>
  void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) const {
    if (!enabled(level)) return;
    callback_(level, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void debug(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::Debug, f, std::forward<Args>(a)...); }
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::Info, f, std::forward<Args>(a)...); }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::Warn, f, std::forward<Args>(a)...); }
  template <typename... Args>
  void error(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::Error, f, std::forward<Args>(a)...); }

 private:
  LogCallback callback_;
  LogLevel min_level_ = LogLevel::Info;
};

}  // namespace hearth
