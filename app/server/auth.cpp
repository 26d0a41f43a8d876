#include <hearth/server/auth.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hearth::server {
namespace {

constexpr size_t kMinTokenChars = 16;
constexpr off_t kMaxKeyFileBytes = 4096;

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

Status write_new_file(const std::filesystem::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return make_error(ErrorCode::Io, fmt::format("cannot create the key file '{}': {}", path.string(), std::strerror(errno)));
  }
  // The umask may only clear bits; make sure nobody else can read it.
  const bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) {
    return make_error(ErrorCode::Io, fmt::format("cannot write the key file '{}': {}", path.string(), std::strerror(saved)));
  }
  return {};
}

Status make_private_dir(const std::filesystem::path& dir) {
  if (dir.empty()) return {};
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) return {};
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(ErrorCode::Io, fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  return {};
}

}  // namespace

std::filesystem::path default_key_file() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    return std::filesystem::path(xdg) / "hearth" / "api-key";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : ".") / ".config" / "hearth" / "api-key";
}

Result<std::string> random_token() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::Io, fmt::format("the kernel gave no random bytes: {}", std::strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

Result<std::string> load_or_create_token(const std::filesystem::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return make_error(ErrorCode::Io, fmt::format("cannot read the key file '{}': {}", file.string(), std::strerror(errno)));
    }
    HEARTH_CHECK(make_private_dir(file.parent_path()));
    HEARTH_TRY(std::string token, random_token());
    HEARTH_CHECK(write_new_file(file, token + "\n"));
    return token;
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("the key file '{}' is not a regular file", file.string()));
  }
  if ((st.st_mode & 077) != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("the key file '{}' can be read or written by others (mode {:o}); run chmod 600 on it",
                                  file.string(), st.st_mode & 0777));
  }
  if (st.st_size > kMaxKeyFileBytes) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("the key file '{}' is {} bytes; a key file holds one token", file.string(), st.st_size));
  }
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return make_error(ErrorCode::Io, fmt::format("cannot open the key file '{}': {}", file.string(), std::strerror(errno)));
  }
  std::string text(static_cast<size_t>(kMaxKeyFileBytes), '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n < 0) return make_error(ErrorCode::Io, fmt::format("cannot read the key file '{}'", file.string()));
  text.resize(static_cast<size_t>(n));
  std::string token = trim(text);
  if (token.size() < kMinTokenChars || token.find_first_of(" \t\r\n") != std::string::npos) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("the key file '{}' must hold one token of at least {} characters without spaces",
                                  file.string(), kMinTokenChars));
  }
  return token;
}

Result<std::string> regenerate_token(const std::filesystem::path& file) {
  HEARTH_CHECK(make_private_dir(file.parent_path()));
  HEARTH_TRY(std::string token, random_token());
  std::filesystem::path temp = file;
  temp += ".new";
  std::error_code ec;
  std::filesystem::remove(temp, ec);
  HEARTH_CHECK(write_new_file(temp, token + "\n"));
  std::filesystem::rename(temp, file, ec);
  if (ec) return make_error(ErrorCode::Io, fmt::format("cannot replace the key file '{}': {}", file.string(), ec.message()));
  return token;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.size() < kPrefix.size() || token.empty()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != std::tolower(static_cast<unsigned char>(kPrefix[i]))) {
      return false;
    }
  }
  const std::string_view given = authorization.substr(kPrefix.size());
  // Constant time in the token's bytes: a wrong guess learns nothing from timing.
  unsigned diff = given.size() == token.size() ? 0u : 1u;
  for (size_t i = 0; i < token.size(); ++i) {
    const char g = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned>(static_cast<unsigned char>(g) ^ static_cast<unsigned char>(token[i]));
  }
  return diff == 0;
}

std::string host_name(std::string_view host) {
  if (host.empty()) return {};
  std::string_view name;
  std::string_view rest;
  if (host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return {};
    name = host.substr(1, close - 1);
    rest = host.substr(close + 1);
  } else {
    const size_t colon = host.find(':');
    name = host.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : host.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() < 2 || rest.size() > 6) return {};
    if (!std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; })) return {};
  }
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!out.empty() && out.back() == '.') out.pop_back();  // "localhost." is localhost
  return out;
}

bool host_allowed(std::string_view host_header, const std::vector<std::string>& configured) {
  const std::string name = host_name(host_header);
  if (name.empty()) return false;
  if (name == "localhost" || name == "127.0.0.1" || name == "::1") return true;
  return std::find(configured.begin(), configured.end(), name) != configured.end();
}

bool origin_allowed(std::string_view origin, const std::vector<std::string>& listed) {
  if (origin.empty() || origin == "null") return false;
  return std::find(listed.begin(), listed.end(), origin) != listed.end();
}

}  // namespace hearth::server
