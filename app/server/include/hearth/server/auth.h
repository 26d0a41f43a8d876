// Who may talk to the server: the bearer token (one per install, kept in a
// file only its owner can read), the Host header (a loopback name or the
// configured address, which stops DNS rebinding) and the Origin header (only
// origins the user listed; never a wildcard).
#pragma once

#include <hearth/core/result.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::server {

// $XDG_CONFIG_HOME/hearth/api-key, else ~/.config/hearth/api-key.
std::filesystem::path default_key_file();

// Reads the token from `file`, or creates the file (mode 0600, its folder
// 0700) with a fresh random token when it does not exist. A file that others
// can read or write, that is not a regular file, or whose token is shorter
// than 16 characters is refused with a message saying so.
Result<std::string> load_or_create_token(const std::filesystem::path& file);
// Replaces the token with a fresh one (written to a 0600 file, then renamed).
Result<std::string> regenerate_token(const std::filesystem::path& file);
// 32 random bytes from the kernel, as 64 hex digits.
Result<std::string> random_token();

// `Authorization: Bearer <token>`, compared in constant time.
bool bearer_matches(std::string_view authorization, std::string_view token);

// The host part of a Host header ("localhost:8080" -> "localhost",
// "[::1]:8080" -> "::1"); empty when malformed.
std::string host_name(std::string_view host_header);
// Loopback names, or one of `configured` (the address the server was bound to).
bool host_allowed(std::string_view host_header, const std::vector<std::string>& configured);
// An Origin is allowed only when listed exactly (scheme://host[:port]).
bool origin_allowed(std::string_view origin, const std::vector<std::string>& listed);

}  // namespace hearth::server
