// The indexer on real folders and SQLite files: a first run, a run killed with
// SIGKILL half-way and resumed, a changed file, a removed file, unreadable files.
#include "hearth/documents/indexer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "documents_test_util.h"

namespace hearth::documents {
namespace {

using storage::Database;
using storage::Libraries;
using storage::LibraryId;
using storage::testing::TempDir;

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// File i has two sections, so two passages with known words.
std::string file_text(int i) {
  return "# Topic " + std::to_string(i) + "\n\nNote number " + std::to_string(i) + " talks about item" +
         std::to_string(i) + ".\n\n# Details\n\nMore on item" + std::to_string(i) + " here.\n";
}

Status run_to_end(IndexRun& run) {
  while (!run.done()) HEARTH_CHECK(run.step(testing::embed_all));
  return {};
}

TEST(Indexer, AThousandFilesSurviveAKillHalfWayWithoutDuplicates) {
  TempDir dir;
  const auto folder = dir.file("docs");
  for (int i = 0; i < 1000; ++i) write(folder / ("d" + std::to_string(i / 100)) / ("f" + std::to_string(i) + ".md"), file_text(i));
  write(folder / ".hidden" / "secret.md", "# never indexed\n");
  write(folder / "image.png", "\x89PNG");
  const auto db_path = dir.file("hearth.db");
  LibraryId library;
  {
    auto db = Database::open(db_path).value();
    Libraries libs(db);
    library = libs.create("Docs", "hashed-words", 64).value();
    ASSERT_TRUE(libs.add_root(library, folder.string()).ok());
  }
  const Extractors extractors = Extractors::builtin();

  // A child indexes and is killed with SIGKILL after 500 files, mid-way through
  // nothing in particular: the next file's transaction may be open or not.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = Database::open(db_path).value();
    Libraries libs(db);
    auto run = IndexRun::plan(libs, library, extractors);
    if (!run.ok()) _exit(2);
    int steps = 0;
    while (!run->done()) {
      if (!run->step(testing::embed_all).ok()) _exit(3);
      if (++steps == 500) kill(getpid(), SIGKILL);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

  auto db = Database::open(db_path).value();
  Libraries libs(db);
  EXPECT_EQ(libs.documents(library).value().size(), 500u);
  auto resumed = IndexRun::plan(libs, library, extractors);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_EQ(resumed->progress().files_total, 1000);
  EXPECT_EQ(resumed->progress().files_unchanged, 500);  // skipped by size and time, unread
  ASSERT_TRUE(run_to_end(*resumed).ok());
  EXPECT_EQ(resumed->progress().files_indexed, 500);
  EXPECT_EQ(resumed->progress().files_done, 1000);

  const auto docs = libs.documents(library).value();
  ASSERT_EQ(docs.size(), 1000u);
  std::set<std::string> paths;
  for (const auto& d : docs) {
    paths.insert(d.info.path);
    EXPECT_EQ(d.chunk_count, 2) << d.info.path;
    EXPECT_EQ(d.info.kind, "markdown");
  }
  EXPECT_EQ(paths.size(), 1000u);
  EXPECT_EQ(libs.chunk_count(library).value(), 2000);
  std::int64_t vectors = 0;
  ASSERT_TRUE(libs.for_each_vector(library, [&](storage::ChunkId, float, std::span<const std::int8_t> v) {
                    EXPECT_EQ(v.size(), 64u);
                    ++vectors;
                  }).ok());
  EXPECT_EQ(vectors, 2000);

  // One file changes: only it is read and re-indexed. One is touched without a
  // change: it is read, found equal by hash, and not re-indexed.
  write(folder / "d3" / "f345.md", "# Rewritten\n\nA brand new zebra paragraph.\n");
  const auto touched = folder / "d7" / "f777.md";
  std::filesystem::last_write_time(touched, std::filesystem::last_write_time(touched) + std::chrono::seconds(5));
  std::filesystem::remove(folder / "d9" / "f999.md");
  auto again = IndexRun::plan(libs, library, extractors).value();
  ASSERT_TRUE(run_to_end(again).ok());
  EXPECT_EQ(again.progress().files_indexed, 1);
  EXPECT_EQ(again.progress().files_unchanged, 998);
  EXPECT_EQ(again.progress().files_removed, 1);
  EXPECT_EQ(libs.documents(library).value().size(), 999u);
  const auto zebra = libs.keyword_search(std::vector<LibraryId>{library}, "zebra", 5).value();
  ASSERT_EQ(zebra.size(), 1u);
  EXPECT_EQ(libs.chunks(std::vector<storage::ChunkId>{zebra[0].chunk}).value()[0].heading, "Rewritten");
  EXPECT_TRUE(libs.keyword_search(std::vector<LibraryId>{library}, "item345", 5).value().empty());
  // A third plan finds nothing to do.
  auto idle = IndexRun::plan(libs, library, extractors).value();
  EXPECT_TRUE(idle.done());
  EXPECT_EQ(idle.progress().files_unchanged, 999);
}

TEST(Indexer, UnreadableFilesAreRecordedAsFailedAndTheRunGoesOn) {
  TempDir dir;
  const auto folder = dir.file("docs");
  write(folder / "good.txt", "plain words here");
  write(folder / "latin1.txt", "caf\xE9");
  write(folder / "big.md", std::string(2000, 'x'));
  auto db = Database::open(dir.file("hearth.db")).value();
  Libraries libs(db);
  const LibraryId library = libs.create("L", "hashed-words", 64).value();
  ASSERT_TRUE(libs.add_root(library, folder.string()).ok());
  IndexerOptions options;
  options.max_file_bytes = 1000;
  const Extractors extractors = Extractors::builtin();
  auto run = IndexRun::plan(libs, library, extractors, options).value();
  ASSERT_TRUE(run_to_end(run).ok());
  EXPECT_EQ(run.progress().files_indexed, 1);
  EXPECT_EQ(run.progress().files_failed, 2);
  const auto docs = libs.documents(library).value();
  for (const auto& d : docs) {
    if (d.info.path.ends_with("latin1.txt")) {
      EXPECT_EQ(d.state, storage::DocumentState::Failed);
      EXPECT_NE(d.error_message.find("offset 3"), std::string::npos) << d.error_message;
    } else if (d.info.path.ends_with("big.md")) {
      EXPECT_EQ(d.state, storage::DocumentState::Failed);
      EXPECT_NE(d.error_message.find("MiB"), std::string::npos) << d.error_message;
    } else {
      EXPECT_EQ(d.state, storage::DocumentState::Indexed);
    }
  }
  // A failed file is not retried until it changes.
  auto again = IndexRun::plan(libs, library, extractors, options).value();
  EXPECT_TRUE(again.done());
}

TEST(Indexer, AnEmbedderOfTheWrongLengthStopsWithAClearErrorAndStoresNothing) {
  TempDir dir;
  write(dir.file("docs") / "a.txt", "some text");
  auto db = Database::open(dir.file("hearth.db")).value();
  Libraries libs(db);
  const LibraryId library = libs.create("L", "m", 32).value();
  ASSERT_TRUE(libs.add_root(library, dir.file("docs").string()).ok());
  const Extractors extractors = Extractors::builtin();
  auto run = IndexRun::plan(libs, library, extractors).value();
  auto status = run.step(testing::embed_all);  // gives 64 components
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("32"), std::string::npos) << status.error().message;
  EXPECT_TRUE(libs.documents(library).value().empty());
}

}  // namespace
}  // namespace hearth::documents
