// Runs `hearth-cli serve` on a fixture model with its own free port and
// scratch key file, and stops it at the end of the test.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace hearth::testing {

inline std::string cli() { return std::string(HEARTH_BINARY_DIR) + "/app/hearth-cli"; }
inline std::string model_path(const std::string& name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

// A folder for this test's files, empty at the start.
inline std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::path(HEARTH_BINARY_DIR) / "test-scratch" /
             (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ServeProcess {
 public:
  // Starts the server; `ok()` says whether it printed its address in time.
  // `model`: a file of tests/data/models, or an absolute path.
  explicit ServeProcess(std::vector<std::string> extra = {}, const std::string& model = "stories260K.gguf") {
    dir_ = scratch_dir();
    key_file_ = dir_ / "api-key";
    std::vector<std::string> args = {cli(), "serve", "--model", model.front() == '/' ? model : model_path(model), "--port", "0",
                                     "--api-key-file", key_file_.string(), "--ctx", "512"};
    args.insert(args.end(), extra.begin(), extra.end());
    int pipefd[2];
    if (pipe(pipefd) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      close(pipefd[1]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(pipefd[1]);
    err_fd_ = pipefd[0];
    // Generous: the model loads on a busy machine.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const std::regex listening(R"(listening on http://([^ ]+):(\d+))");
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 500) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd_, buf, sizeof buf);
      if (n <= 0) break;
      stderr_.append(buf, static_cast<size_t>(n));
      std::smatch m;
      if (std::regex_search(stderr_, m, listening)) {
        host_ = m[1];
        port_ = std::stoi(m[2]);
        key_ = slurp(key_file_);
        while (!key_.empty() && (key_.back() == '\n' || key_.back() == ' ')) key_.pop_back();
        return;
      }
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      // The server must stop on SIGTERM; one that does not is a failure, and
      // is killed so the suite goes on (generous: a busy machine).
      kill(pid_, SIGTERM);
      int status = 0;
      bool exited = false;
      for (int i = 0; i < 600 && !exited; ++i) {
        exited = waitpid(pid_, &status, WNOHANG) == pid_;
        if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!exited) {
        ADD_FAILURE() << "hearth-cli serve did not stop within 60 s of SIGTERM";
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      } else {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "serve exited with status " << status;
      }
    }
    if (err_fd_ >= 0) close(err_fd_);
  }
  bool ok() const { return port_ > 0; }
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  const std::string& key() const { return key_; }
  const std::string& stderr_text() const { return stderr_; }
  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& key_file() const { return key_file_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int port_ = 0;
  std::string host_;
  std::string key_;
  std::string stderr_;
  std::filesystem::path dir_;
  std::filesystem::path key_file_;
};

// Runs a shell command and returns its stdout and exit status.
inline std::pair<std::string, int> run_command(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {out, -1};
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace hearth::testing
