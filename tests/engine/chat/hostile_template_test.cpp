// Generated hostile templates, each rendered in a child process under a 4 GB
// address-space cap and killed after a generous 10 s: every case must end with
// the sandbox's LimitExceeded error. A rendered result, another error, running
// out of memory (std::bad_alloc or a signal) or still running at 10 s fails
// the case. Only the outcome is asserted; the 10 s is a hang detector for
// something the sandbox stops within about half a second.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hearth/engine/chat/chat_template.h"
#include "hearth/engine/chat/template.h"

namespace hearth::chat {
namespace {

constexpr rlim_t kAddressSpaceCap = 4'000'000'000;
constexpr auto kHangAfter = std::chrono::seconds(10);

enum ChildExit { kLimitExceeded = 0, kOtherError = 1, kRendered = 2, kOutOfMemory = 3 };

struct Outcome {
  std::string what;  // for the failure message
  bool limit_exceeded = false;
};

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  return text;
}

// Renders `source` (with a small conversation as context) in a forked child.
Outcome render_in_child(const std::string& source) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {"pipe() failed", false};
  const pid_t pid = fork();
  if (pid < 0) return {"fork() failed", false};
  if (pid == 0) {
    close(pipe_fds[0]);
    const rlimit cap{kAddressSpaceCap, kAddressSpaceCap};
    setrlimit(RLIMIT_AS, &cap);
    int code = kOtherError;
    std::string message;
    try {
      auto tmpl = ChatTemplate::from_source(source);
      Result<std::string> result = tmpl.ok() ? Result<std::string>(std::string()) : Result<std::string>(tmpl.error());
      if (tmpl.ok()) {
        RenderOptions options;
        result = render_chat(*tmpl, {{"system", "Be brief.", {}}, {"user", "Hi", {}}}, options);
      }
      if (result.ok()) {
        code = kRendered;
        message = "rendered " + std::to_string(result->size()) + " bytes";
      } else {
        code = result.error().code == ErrorCode::LimitExceeded ? kLimitExceeded : kOtherError;
        message = result.error().message;
      }
    } catch (const std::bad_alloc&) {
      code = kOutOfMemory;
      message = "ran out of memory (std::bad_alloc)";
    }
    message.resize(std::min<size_t>(message.size(), 2000));
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(code);
  }
  close(pipe_fds[1]);
  const auto give_up = std::chrono::steady_clock::now() + kHangAfter;
  int status = 0;
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() < give_up) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) ended = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(pipe_fds[0]);
    return {"still running after 10 s: killed", false};
  }
  const std::string message = read_all(pipe_fds[0]);
  close(pipe_fds[0]);
  if (WIFSIGNALED(status)) return {"crashed with signal " + std::to_string(WTERMSIG(status)), false};
  const int code = WEXITSTATUS(status);
  if (code == kLimitExceeded) return {"LimitExceeded: " + message, true};
  if (code == kRendered) return {message, false};
  if (code == kOutOfMemory) return {message, false};
  return {"other error: " + message, false};
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Sizes are drawn from hostile ranges by a fixed seed, so each run is the same.
class Gen {
 public:
  explicit Gen(unsigned seed) : rng_(seed) {}
  size_t between(size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng_); }
  template <typename T>
  const T& pick(const std::vector<T>& options) { return options[between(0, options.size() - 1)]; }

 private:
  std::mt19937 rng_;
};

void expect_all_limited(const std::vector<std::string>& sources) {
  for (const auto& source : sources) {
    SCOPED_TRACE(source.size() > 300 ? source.substr(0, 300) + "... (" + std::to_string(source.size()) + " bytes)"
                                     : source);
    const Outcome o = render_in_child(source);
    EXPECT_TRUE(o.limit_exceeded) << o.what;
  }
}

std::string big_string(Gen& g) { return "{% set s = 'x' * " + std::to_string(g.between(4'000'000, 8'000'000)) + " %}"; }

TEST(HostileTemplates, ListConversionOfBigStrings) {
  Gen g(1);
  expect_all_limited({
      // Over the item cap at once.
      big_string(g) + "{{ (s | list) | length }}",
      // Under the cap (~100 MB a list), but kept 64 times: about 6 GB without the work budget.
      "{% set s = 'y' * " + std::to_string(g.between(700'000, 1'000'000)) +
          " %}{% set ns = namespace(a=[]) %}{% for i in range(64) %}{% set ns.a = ns.a + [s | list] %}{% endfor %}"
          "{{ ns.a | length }}",
  });
}

TEST(HostileTemplates, Repetition) {
  Gen g(2);
  expect_all_limited({
      "{{ 'ab' * " + std::to_string(g.between(10'000'000, 1'000'000'000'000)) + " }}",
      "{{ 'x' * 1e9 }}",
      "{{ ([[0] * 1000000] * " + std::to_string(g.between(1000, 1'000'000)) + ") | tojson }}",
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
  });
}

TEST(HostileTemplates, FiltersOnLargeData) {
  Gen g(3);
  const std::string many = "{% set l = [s] * " + std::to_string(g.between(1000, 1'000'000)) + " %}";
  expect_all_limited({
      big_string(g) + many + "{{ l | join | length }}",
      big_string(g) + many + "{{ l | tojson | length }}",
      big_string(g) + many + "{{ l }}",
      big_string(g) + many + "{{ l | map('upper') | list | length }}",
      big_string(g) + many + "{{ l | select('lower') | list | length }}",
      big_string(g) + "{% for i in range(100000) %}{% set t = s | " + g.pick<std::string>({"upper", "lower", "trim"}) +
          " %}{% endfor %}",
      "{% for i in range(300) %}{% set x = ((range(100000) | list) * 10) | sort %}{% endfor %}",
      "{{ (range(100000) | list) | unique | length }}",
      "{% set a = [[[0] * 1000] * 1000] * 1000 %}{% set b = [[[0] * 1000] * 1000] * 1000 %}{{ a == b }}",
      big_string(g) + "{{ (s | replace('x', '\\n')) | indent(" + std::to_string(g.between(100, 1000)) + ") | length }}",
      big_string(g) + "{% set b = s ~ '' %}{% for i in range(100000) %}{% if s == b %}{% endif %}{% endfor %}",
  });
}

TEST(HostileTemplates, NestedLoops) {
  Gen g(4);
  expect_all_limited({
      "{% for i in range(" + std::to_string(g.between(10'000, 100'000)) + ") %}{% for j in range(" +
          std::to_string(g.between(10'000, 100'000)) + ") %}{{ '' }}{% endfor %}{% endfor %}",
      "{% macro f(n) %}{% for m in messages %}{{ f(n + 1) }}{% endfor %}{% endmacro %}{{ f(0) }}",
  });
}

TEST(HostileTemplates, ChainedComparisons) {
  Gen g(5);
  std::vector<std::string> sources;
  for (int i = 0; i < 2; ++i) {
    sources.push_back("{{ 1" + repeat(g.pick<std::string>({"<1", "==1", " in 1"}), g.between(100'000, 200'000)) + " }}");
  }
  expect_all_limited(sources);
}

TEST(HostileTemplates, DeepNesting) {
  Gen g(6);
  const size_t n = g.between(300, 100'000);
  expect_all_limited({
      "{{ " + repeat("(", n) + "1" + repeat(")", n) + " }}",
      repeat("{% if true %}", n) + repeat("{% endif %}", n),
      "{{ " + repeat("[", n) + repeat("]", n) + " }}",
  });
}

TEST(HostileTemplates, HugeLiterals) {
  Gen g(7);
  expect_all_limited({
      // A list literal of over a million items (under the 4 MiB template cap).
      "{{ [" + repeat("1,", g.between(1'100'000, 2'000'000)) + "1] | length }}",
      // A string literal past the template size cap.
      "{{ '" + std::string(g.between(4'200'000, 5'000'000), 'x') + "' }}",
  });
}

}  // namespace
}  // namespace hearth::chat
