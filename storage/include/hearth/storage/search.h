// Full-text search (SQLite FTS5, unicode61 tokenizer with diacritics folded) over
// message text and conversation titles, ranked by BM25. A reply's reasoning
// ("thinking") is searched only on request (SearchOptions::include_reasoning).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

// Plain: the user's words; every word must occur (any order), quotes and operators
// are taken literally. Fts5: the text is an FTS5 query expression (AND/OR/NOT/NEAR,
// "phrases", column filters), for power users.
enum class QuerySyntax { Plain, Fts5 };
// Prefix: in Plain syntax each word also matches words it begins ("conv" matches
// "conversation").
enum class PrefixMatch { LastWord, EveryWord, None };

struct SearchOptions {
  QuerySyntax syntax = QuerySyntax::Plain;
  PrefixMatch prefix = PrefixMatch::LastWord;
  std::int64_t limit = 50;
  std::int64_t offset = 0;
  std::optional<ConversationId> conversation;  // restrict to one conversation
  std::string highlight_open = "[";   // put around matched words in snippets
  std::string highlight_close = "]";
  std::string ellipsis = "\xE2\x80\xA6";  // U+2026
  int snippet_tokens = 16;                // words of context per snippet (1..64)
  // BM25 scores every matching row before the best can be picked, which for a word
  // in most messages of a large history costs ~1 ms per 1,000 rows. When a query
  // matches more messages than this, only the most recent `rank_window` of them are
  // ranked (a recency bias users expect from chat search). 0 ranks all matches.
  std::int64_t rank_window = 10000;
  // Also search the reasoning of replies (its own index, ranked with the rest; the
  // rank window applies to it separately). Off by default: thinking is scratch work
  // the user did not ask to find.
  bool include_reasoning = false;
};

// Where a hit's words were found.
enum class SearchField { Title, Content, Reasoning };

struct SearchHit {
  ConversationId conversation;
  MessageId message;  // invalid for a hit on the conversation title
  std::string title;  // the conversation's title
  std::string snippet;  // from the field the words were found in
  double rank = 0;  // BM25 score as FTS5 reports it: lower is better
  // A message matching in its answer and its reasoning gives one hit for each.
  SearchField field = SearchField::Content;
};

class Search {
 public:
  explicit Search(Database& db) : db_(db) {}

  // Best hits first. An empty (or all-punctuation) Plain query returns no hits.
  Result<std::vector<SearchHit>> query(std::string_view text, const SearchOptions& options = {});

 private:
  Database& db_;
};

// The FTS5 expression a Plain query becomes: each word quoted (so operators and
// punctuation lose their meaning) with '*' per PrefixMatch. Exposed for tests.
std::string plain_to_fts5(std::string_view text, PrefixMatch prefix);

}  // namespace hearth::storage
