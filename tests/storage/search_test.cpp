#include "hearth/storage/search.h"

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::StorageKind;
using testing::StorageTest;

class SearchTest : public StorageTest {
 protected:
  ConversationId add(const std::string& title, const std::vector<std::string>& texts) {
    auto id = Conversations(db()).create({title, "", "", "", {}});
    EXPECT_TRUE(id.ok());
    MessageId parent;
    for (const std::string& text : texts) {
      auto m = Messages(db()).append(*id, parent, {Role::User, text, 0});
      EXPECT_TRUE(m.ok());
      parent = *m;
    }
    return *id;
  }
  std::vector<std::string> snippets(std::string_view query, SearchOptions options = {}) {
    std::vector<std::string> out;
    auto hits = Search(db()).query(query, options);
    EXPECT_TRUE(hits.ok()) << hits.error().message;
    if (hits.ok()) {
      for (const SearchHit& h : *hits) out.push_back(h.snippet);
    }
    return out;
  }
};

TEST(PlainQuery, QuotesEveryWordAndAddsPrefixStars) {
  EXPECT_EQ(plain_to_fts5("hello world", PrefixMatch::LastWord), "\"hello\" \"world\"*");
  EXPECT_EQ(plain_to_fts5("  a  b ", PrefixMatch::EveryWord), "\"a\"* \"b\"*");
  EXPECT_EQ(plain_to_fts5("x", PrefixMatch::None), "\"x\"");
  // Operators and quotes lose their meaning.
  EXPECT_EQ(plain_to_fts5("say \"NOT\" OR", PrefixMatch::None), "\"say\" \"\"\"NOT\"\"\" \"OR\"");
  EXPECT_EQ(plain_to_fts5("-- ** ()", PrefixMatch::LastWord), "");
  EXPECT_EQ(plain_to_fts5("", PrefixMatch::LastWord), "");
}

TEST_P(SearchTest, FindsMessagesWithHighlightedSnippets) {
  const ConversationId c = add("Cooking", {"How long should I boil an egg?", "About nine minutes for a hard egg."});
  add("Travel", {"Trains from Vienna to Prague"});
  HEARTH_ASSERT_VALUE(auto hits, Search(db()).query("egg", {}));
  ASSERT_EQ(hits.size(), 2u);
  for (const SearchHit& h : hits) {
    EXPECT_EQ(h.conversation, c);
    EXPECT_TRUE(h.message.valid());
    EXPECT_EQ(h.title, "Cooking");
  }
  EXPECT_EQ(snippets("boil egg"), (std::vector<std::string>{"How long should I [boil] an [egg]?"}));
}

TEST_P(SearchTest, CustomMarkersAndLongTextsAreCut) {
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "filler" + std::to_string(i) + " ";
  long_text += "needle";
  for (int i = 0; i < 40; ++i) long_text += " more" + std::to_string(i);
  add("t", {long_text});
  SearchOptions options;
  options.highlight_open = "<b>";
  options.highlight_close = "</b>";
  options.ellipsis = "...";
  options.snippet_tokens = 5;
  const auto s = snippets("needle", options);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].find("<b>needle</b>"), std::string::npos);
  EXPECT_EQ(s[0].rfind("...", 0), 0u) << s[0];  // starts with the ellipsis
  EXPECT_LT(s[0].size(), 70u) << s[0];
}

TEST_P(SearchTest, PrefixQueries) {
  add("t", {"a conversation about conversion", "the converter", "convex"});
  EXPECT_EQ(snippets("conv").size(), 3u);
  EXPECT_EQ(snippets("conve").size(), 3u);
  EXPECT_EQ(snippets("conver").size(), 2u);
  SearchOptions exact;
  exact.prefix = PrefixMatch::None;
  EXPECT_TRUE(snippets("conv", exact).empty());
  EXPECT_EQ(snippets("convex", exact).size(), 1u);
  // LastWord: earlier words must match whole.
  EXPECT_TRUE(snippets("conv about").empty());
  EXPECT_EQ(snippets("about conv").size(), 1u);
  SearchOptions every;
  every.prefix = PrefixMatch::EveryWord;
  EXPECT_EQ(snippets("conv abo", every).size(), 1u);
}

TEST_P(SearchTest, UnicodeFoldsCaseAndDiacritics) {
  add("Café notes", {"Über den Straßenverkehr in Kraków", "ΣΟΦΊΑ and σοφία"});
  EXPECT_EQ(snippets("uber").size(), 1u);
  EXPECT_EQ(snippets("KRAKOW").size(), 1u);
  // Case folds in every script; SQLite removes diacritics from Latin letters only,
  // so the Greek query keeps its tonos.
  EXPECT_EQ(snippets("σοφία", [] { SearchOptions o; o.prefix = PrefixMatch::None; return o; }()),
            (std::vector<std::string>{"[ΣΟΦΊΑ] and [σοφία]"}));
  // Title hit, with the accent kept in the highlight.
  HEARTH_ASSERT_VALUE(auto hits, Search(db()).query("cafe", {}));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_FALSE(hits[0].message.valid());
  EXPECT_EQ(hits[0].snippet, "[Café] notes");
}

TEST_P(SearchTest, RanksDenserMatchesFirstAndPages) {
  add("t", {"tea", "tea tea tea, all tea", "coffee then tea later and more words here"});
  const auto all = snippets("tea");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], "[tea] [tea] [tea], all [tea]");  // most occurrences, short: best BM25
  SearchOptions page;
  page.limit = 1;
  page.offset = 1;
  EXPECT_EQ(snippets("tea", page), (std::vector<std::string>{all[1]}));
  page.offset = 3;
  EXPECT_TRUE(snippets("tea", page).empty());
}

TEST_P(SearchTest, RankWindowRanksOnlyTheNewestMatches) {
  add("t", {"tea tea tea tea", "tea and biscuits on a plate", "some tea with milk and sugar"});
  SearchOptions all;
  all.rank_window = 0;
  const auto everything = snippets("tea", all);
  ASSERT_EQ(everything.size(), 3u);
  EXPECT_EQ(everything[0], "[tea] [tea] [tea] [tea]");
  SearchOptions window;
  window.rank_window = 2;  // the oldest (and best) match falls outside
  const auto newest = snippets("tea", window);
  ASSERT_EQ(newest.size(), 2u);
  for (const std::string& s : newest) EXPECT_NE(s, "[tea] [tea] [tea] [tea]");
}

TEST_P(SearchTest, TitlesAreIndexedAndFollowRenames) {
  const ConversationId c = add("Quarterly budget", {"numbers"});
  EXPECT_EQ(snippets("budget"), (std::vector<std::string>{"Quarterly [budget]"}));
  HEARTH_ASSERT_OK(Conversations(db()).rename(c, "Holiday plans"));
  EXPECT_TRUE(snippets("budget").empty());
  EXPECT_EQ(snippets("holiday").size(), 1u);
  HEARTH_ASSERT_OK(Conversations(db()).remove(c));
  EXPECT_TRUE(snippets("holiday").empty());
  EXPECT_TRUE(snippets("numbers").empty());
}

TEST_P(SearchTest, IndexFollowsStreamingEditsAndDeletes) {
  const ConversationId c = add("t", {"question"});
  Messages messages(db());
  const MessageId q = messages.roots(c).value().at(0);
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(c, q));
  HEARTH_ASSERT_OK(messages.update_reply(r, "draft words", 2));
  EXPECT_EQ(snippets("draft").size(), 1u);
  HEARTH_ASSERT_OK(messages.finish_reply(r, {MessageState::Complete, "final words", 2, {}, ""}));
  EXPECT_TRUE(snippets("draft").empty());
  EXPECT_EQ(snippets("final").size(), 1u);
  HEARTH_ASSERT_OK(messages.delete_branch(r));
  EXPECT_TRUE(snippets("final").empty());
}

TEST_P(SearchTest, RestrictsToOneConversation) {
  const ConversationId a = add("a", {"shared word"});
  add("b", {"shared word"});
  SearchOptions options;
  options.conversation = a;
  HEARTH_ASSERT_VALUE(auto hits, Search(db()).query("shared", options));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].conversation, a);
}

TEST_P(SearchTest, UserTextCannotInjectQuerySyntax) {
  add("t", {"alpha beta", "gamma"});
  // As FTS5 syntax these would be operators or errors; as plain text they are words.
  EXPECT_TRUE(snippets("alpha OR gamma").empty());
  EXPECT_TRUE(snippets("\"unbalanced").empty());
  EXPECT_TRUE(snippets("content:gamma").empty());
  EXPECT_TRUE(snippets("***").empty());
  EXPECT_EQ(snippets("'; DROP TABLE messages; --").size(), 0u);
  EXPECT_EQ(snippets("gamma").size(), 1u);
}

TEST_P(SearchTest, Fts5SyntaxForPowerUsers) {
  add("t", {"alpha beta", "gamma"});
  SearchOptions options;
  options.syntax = QuerySyntax::Fts5;
  EXPECT_EQ(snippets("alpha OR gamma", options).size(), 2u);
  auto bad = Search(db()).query("\"unbalanced", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
  SearchOptions no_rows;
  no_rows.limit = 0;
  EXPECT_EQ(error_code(Search(db()).query("x", no_rows)), ErrorCode::InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Storage, SearchTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
