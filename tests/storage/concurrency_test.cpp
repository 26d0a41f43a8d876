// One writer (the storage thread) streams a reply while readers on their own
// read-only connections poll it, list conversations and search, as the app's
// reader threads will.
#include <algorithm>
#include <atomic>
#include <thread>

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "hearth/storage/search.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::TempDir;

std::string snapshot(int words) {
  std::string text;
  for (int i = 0; i < words; ++i) text += "word" + std::to_string(i) + " ";
  return text;
}

TEST(Concurrency, ReadersSeeOnlyCommittedSnapshotsWhileTheWriterStreams) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  constexpr int kUpdates = 300;
  HEARTH_ASSERT_VALUE(Database writer_db, Database::open(path));
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(writer_db).create({"live", "", "", "", {}}));
  HEARTH_ASSERT_VALUE(MessageId q, Messages(writer_db).append(c, MessageId{}, {Role::User, "go", 1}));
  HEARTH_ASSERT_VALUE(MessageId r, Messages(writer_db).begin_reply(c, q));

  std::atomic<bool> done{false};
  std::atomic<int> reader_errors{0};
  std::atomic<int> bad_snapshots{0};
  std::atomic<int> went_backwards{0};
  std::atomic<long> reads{0};

  auto reader = [&] {
    OpenOptions options;
    options.access = Access::ReadOnly;
    auto db = Database::open(path, options);
    if (!db.ok()) {
      ++reader_errors;
      return;
    }
    std::size_t last_length = 0;
    while (!done.load()) {
      auto m = Messages(*db).get(r);
      auto list = Conversations(*db).list({});
      auto hits = Search(*db).query("word1");
      if (!m.ok() || !list.ok() || !hits.ok()) {
        ++reader_errors;
        continue;
      }
      // Every state a reader sees is one the writer committed: some snapshot(k).
      const std::size_t words = static_cast<std::size_t>(std::count(m->content.begin(), m->content.end(), ' '));
      if (m->content != snapshot(static_cast<int>(words))) ++bad_snapshots;
      if (m->content.size() < last_length) ++went_backwards;
      last_length = m->content.size();
      ++reads;
    }
  };
  std::thread r1(reader), r2(reader);

  // The writer runs on its own thread, like the app's storage thread; the
  // connection moves there with it.
  std::thread writer([&, db = std::move(writer_db)]() mutable {
    Messages messages(db);
    for (int u = 1; u <= kUpdates; ++u) {
      if (!messages.update_reply(r, snapshot(u), u).ok()) ++reader_errors;
    }
    if (!messages.finish_reply(r, {MessageState::Complete, snapshot(kUpdates), kUpdates, {}, ""}).ok()) ++reader_errors;
  });
  writer.join();
  // Let the readers observe the final state before stopping.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  done = true;
  r1.join();
  r2.join();

  EXPECT_EQ(reader_errors.load(), 0);
  EXPECT_EQ(bad_snapshots.load(), 0);
  EXPECT_EQ(went_backwards.load(), 0);
  EXPECT_GT(reads.load(), 10);

  OpenOptions options;
  options.access = Access::ReadOnly;
  HEARTH_ASSERT_VALUE(Database check, Database::open(path, options));
  HEARTH_ASSERT_VALUE(Message final_reply, Messages(check).get(r));
  EXPECT_EQ(final_reply.content, snapshot(kUpdates));
  EXPECT_EQ(final_reply.state, MessageState::Complete);
}

}  // namespace
}  // namespace hearth::storage
