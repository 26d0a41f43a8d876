// Crash test: a child process streams replies into a database the way the app's
// storage thread does and is killed with SIGKILL at a random moment, 100 times.
// After each kill the parent reopens the database and checks that it passes
// integrity_check, that every message the child reported committed is intact, and
// that the reply cut off holds the text of its last update.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::TempDir;

constexpr int kUpdatesPerReply = 12;

// Deterministic texts, so the parent knows what every reported commit wrote.
std::string question_text(std::int64_t conversation) { return "question for " + std::to_string(conversation); }
std::string reply_text(std::int64_t reply, int updates) {
  std::string text;
  for (int i = 0; i < updates; ++i) text += "tok" + std::to_string(reply) + "_" + std::to_string(i) + " ";
  return text;
}

// The child reports each commit after it returned, one line per write(2) call.
void report(int fd, const std::string& line) {
  const std::string data = line + "\n";
  if (write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) _exit(3);
}

[[noreturn]] void child(const std::filesystem::path& path, int fd) {
  auto db = Database::open(path);
  if (!db.ok()) _exit(2);
  Conversations conversations(*db);
  Messages messages(*db);
  while (true) {
    auto c = conversations.create({"crash", "", "", "", {}});
    if (!c.ok()) _exit(2);
    auto q = messages.append(*c, MessageId{}, {Role::User, question_text(c->value()), 3});
    if (!q.ok()) _exit(2);
    report(fd, "U " + std::to_string(q->value()) + " " + std::to_string(c->value()));
    auto r = messages.begin_reply(*c, *q);
    if (!r.ok()) _exit(2);
    report(fd, "B " + std::to_string(r->value()));
    for (int u = 1; u <= kUpdatesPerReply; ++u) {
      if (!messages.update_reply(*r, reply_text(r->value(), u), u).ok()) _exit(2);
      report(fd, "P " + std::to_string(r->value()) + " " + std::to_string(u));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ReplyEnd end{MessageState::Complete, reply_text(r->value(), kUpdatesPerReply + 1), kUpdatesPerReply + 1, {}, ""};
    if (!messages.finish_reply(*r, end).ok()) _exit(2);
    report(fd, "F " + std::to_string(r->value()));
  }
}

// What the parent knows was committed.
struct Expected {
  std::map<std::int64_t, std::string> questions;  // message id -> text
  std::map<std::int64_t, int> replies_in_flight;   // reply id -> last reported update
  std::map<std::int64_t, std::string> settled;     // reply id -> final text (complete or interrupted)
};

std::string read_all(int fd) {
  std::string data;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) data.append(buffer, static_cast<std::size_t>(n));
  return data;
}

// Reads until `lines` report lines arrived (or the child closed the pipe).
std::string read_lines(int fd, int lines) {
  std::string data;
  char c = 0;
  while (lines > 0 && read(fd, &c, 1) == 1) {
    data.push_back(c);
    if (c == '\n') --lines;
  }
  return data;
}

void apply_reports(const std::string& data, Expected& expected) {
  std::istringstream lines(data);
  std::string kind;
  while (lines >> kind) {
    std::int64_t id = 0;
    lines >> id;
    if (kind == "U") {
      std::int64_t conversation = 0;
      lines >> conversation;
      expected.questions[id] = question_text(conversation);
    } else if (kind == "B") {
      expected.replies_in_flight[id] = 0;
    } else if (kind == "P") {
      int update = 0;
      lines >> update;
      expected.replies_in_flight[id] = update;
    } else if (kind == "F") {
      expected.replies_in_flight.erase(id);
      expected.settled[id] = reply_text(id, kUpdatesPerReply + 1);
    }
  }
}

TEST(CrashTest, SigkillAtRandomMomentsLosesNothingCommitted) {
  TempDir dir;
  const auto path = dir.file("crash.db");
  std::mt19937 rng(8);
  // The kill follows the child's progress, not the clock: after a random
  // number of its reports (between the start of a reply and its last update)
  // and a short random delay, so it lands mid-reply however loaded the
  // machine is.
  std::uniform_int_distribution<int> reports_before_kill(2, 13);
  std::uniform_int_distribution<int> delay_us(0, 2000);
  Expected expected;
  int interrupted_checked = 0;

  for (int round = 0; round < 100; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child(path, fds[1]);
    }
    close(fds[1]);
    std::string seen = read_lines(fds[0], reports_before_kill(rng));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child stopped on its own with status " << status;
    seen += read_all(fds[0]);
    apply_reports(seen, expected);
    close(fds[0]);

    auto db = Database::open(path);
    ASSERT_TRUE(db.ok()) << db.error().message;
    ASSERT_TRUE(db->integrity_check().ok());
    Messages messages(*db);
    for (const auto& [id, text] : expected.questions) {
      auto m = messages.get(MessageId{id});
      ASSERT_TRUE(m.ok()) << "question " << id << ": " << m.error().message;
      EXPECT_EQ(m->content, text);
      EXPECT_EQ(m->state, MessageState::Complete);
    }
    for (const auto& [id, text] : expected.settled) {
      auto m = messages.get(MessageId{id});
      ASSERT_TRUE(m.ok()) << "reply " << id << ": " << m.error().message;
      EXPECT_EQ(m->content, text);
    }
    // The reply cut off: interrupted, holding its last reported update, or the next
    // one if the kill came between the commit and the report. If its finish was
    // committed but not reported, it is complete.
    for (const auto& [id, update] : expected.replies_in_flight) {
      auto m = messages.get(MessageId{id});
      ASSERT_TRUE(m.ok()) << "reply " << id << ": " << m.error().message;
      if (m->state == MessageState::Complete) {
        EXPECT_EQ(update, kUpdatesPerReply);
        EXPECT_EQ(m->content, reply_text(id, kUpdatesPerReply + 1));
      } else {
        EXPECT_EQ(m->state, MessageState::Interrupted);
        EXPECT_TRUE(m->content == reply_text(id, update) || m->content == reply_text(id, update + 1))
            << "reply " << id << " after update " << update << " holds '" << m->content << "'";
        ++interrupted_checked;
      }
      expected.settled[id] = m->content;  // from now on it must stay exactly so
    }
    expected.replies_in_flight.clear();
    // No reply is left streaming after an open.
    auto all_conversations = Conversations(*db).list({ArchiveFilter::All, 1'000'000, 0});
    ASSERT_TRUE(all_conversations.ok());
    for (const auto& conversation : *all_conversations) {
      auto all_messages = messages.all(conversation.id);
      ASSERT_TRUE(all_messages.ok());
      for (const Message& m : *all_messages) EXPECT_NE(m.state, MessageState::Streaming) << "message " << m.id.value();
    }
    if (::testing::Test::HasFailure()) return;
  }
  std::printf("100 kills: %zu questions committed, %zu replies settled, %d replies checked mid-stream\n",
              expected.questions.size(), expected.settled.size(), interrupted_checked);
  // The kills must have landed mid-reply often enough for the test to mean something.
  EXPECT_GT(interrupted_checked, 25);
  EXPECT_GT(expected.questions.size(), 20u);
}

}  // namespace
}  // namespace hearth::storage
