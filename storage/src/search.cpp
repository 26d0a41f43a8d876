#include "hearth/storage/search.h"

#include <algorithm>

#include "database_impl.h"

namespace hearth::storage {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// A word the unicode61 tokenizer would index: it has a letter or digit. Any byte of
// a multi-byte UTF-8 sequence counts, since the tokenizer keeps non-ASCII letters.
bool has_token(std::string_view word) {
  return std::any_of(word.begin(), word.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
  });
}

// Running a query fails on a malformed expression, which in Fts5 syntax is the
// caller's input.
Error query_error(Error error, const SearchOptions& options) {
  if (options.syntax == QuerySyntax::Fts5) error.code = ErrorCode::InvalidArgument;
  return error;
}

// Appends the best `offset + limit` hits of one message index (message_fts over
// content, message_reasoning_fts over reasoning; both external-content tables keyed
// by messages.id). `table` is one of those constant names, never user input.
Status message_hits(DatabaseImpl& impl, const std::string& table, SearchField field, const std::string& expression,
                    const SearchOptions& options, std::vector<SearchHit>& hits) {
  const std::int64_t wanted = options.offset + options.limit;
  const std::int64_t tokens = std::clamp(options.snippet_tokens, 1, 64);
  // The oldest message inside the rank window (see SearchOptions::rank_window);
  // walking the match list in rowid order is cheap, scoring it is not.
  std::int64_t oldest = 0;
  if (options.rank_window > 0 && !options.conversation) {
    HEARTH_TRY(auto stmt, impl.prepare(("SELECT rowid FROM " + table + " WHERE " + table +
                                        " MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2")
                                           .c_str()));
    stmt.bind(1, expression).bind(2, options.rank_window - 1);
    auto row = stmt.step();
    if (!row.ok()) return query_error(row.take_error(), options);
    if (*row) oldest = stmt.int64(0);
  }
  HEARTH_TRY(auto stmt, impl.prepare(("SELECT m.conversation_id, m.id, c.title, "
                                      "       snippet(" + table + ", 0, ?2, ?3, ?4, ?5), " + table + ".rank "
                                      "FROM " + table + " JOIN messages m ON m.id = " + table + ".rowid "
                                      "JOIN conversations c ON c.id = m.conversation_id "
                                      "WHERE " + table + " MATCH ?1 AND " + table + ".rowid >= ?8 "
                                      "AND (?6 IS NULL OR m.conversation_id = ?6) "
                                      "ORDER BY " + table + ".rank LIMIT ?7")
                                         .c_str()));
  stmt.bind(1, expression).bind(2, options.highlight_open).bind(3, options.highlight_close);
  stmt.bind(4, options.ellipsis).bind(5, tokens);
  stmt.bind(6, options.conversation.value_or(ConversationId{})).bind(7, wanted).bind(8, oldest);
  while (true) {
    auto row = stmt.step();
    if (!row.ok()) return query_error(row.take_error(), options);
    if (!*row) return {};
    hits.push_back(SearchHit{stmt.id<ConversationId>(0), stmt.id<MessageId>(1), stmt.text(2), stmt.text(3),
                             stmt.real(4), field});
  }
}

}  // namespace

std::string plain_to_fts5(std::string_view text, PrefixMatch prefix) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end])) ++end;
    if (end > i && has_token(text.substr(i, end - i))) words.push_back(text.substr(i, end - i));
    i = end;
  }
  std::string query;
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (!query.empty()) query += ' ';
    // A quoted FTS5 string is a phrase: operators and punctuation inside it are
    // plain text. Quotes inside are escaped by doubling.
    query += '"';
    for (char c : words[w]) {
      if (c == '"') query += '"';
      query += c;
    }
    query += '"';
    const bool last = w + 1 == words.size();
    if (prefix == PrefixMatch::EveryWord || (prefix == PrefixMatch::LastWord && last)) query += '*';
  }
  return query;
}

Result<std::vector<SearchHit>> Search::query(std::string_view text, const SearchOptions& options) {
  if (options.limit <= 0 || options.offset < 0) {
    return make_error(ErrorCode::InvalidArgument, "search limit must be positive and offset not negative");
  }
  const std::string expression =
      options.syntax == QuerySyntax::Plain ? plain_to_fts5(text, options.prefix) : std::string(text);
  if (expression.empty()) return std::vector<SearchHit>{};

  DatabaseImpl& impl = db_.impl();
  const std::int64_t wanted = options.offset + options.limit;
  std::vector<SearchHit> hits;

  // Each table is ranked on its own with ORDER BY rank LIMIT, which FTS5 sorts
  // internally, so snippets are only built for the rows returned. The lists are
  // then merged by BM25 score.
  HEARTH_CHECK(message_hits(impl, "message_fts", SearchField::Content, expression, options, hits));
  if (options.include_reasoning) {
    HEARTH_CHECK(message_hits(impl, "message_reasoning_fts", SearchField::Reasoning, expression, options, hits));
  }
  {
    HEARTH_TRY(auto stmt, impl.prepare(
                              "SELECT c.id, c.title, highlight(conversation_fts, 0, ?2, ?3), conversation_fts.rank "
                              "FROM conversation_fts JOIN conversations c ON c.id = conversation_fts.rowid "
                              "WHERE conversation_fts MATCH ?1 AND (?4 IS NULL OR c.id = ?4) "
                              "ORDER BY conversation_fts.rank LIMIT ?5"));
    stmt.bind(1, expression).bind(2, options.highlight_open).bind(3, options.highlight_close);
    stmt.bind(4, options.conversation.value_or(ConversationId{})).bind(5, wanted);
    while (true) {
      auto row = stmt.step();
      if (!row.ok()) return query_error(row.take_error(), options);
      if (!*row) break;
      hits.push_back(SearchHit{stmt.id<ConversationId>(0), MessageId{}, stmt.text(1), stmt.text(2), stmt.real(3),
                               SearchField::Title});
    }
  }
  // Title hits sort before message hits of equal score; stable for equal keys.
  std::stable_sort(hits.begin(), hits.end(), [](const SearchHit& a, const SearchHit& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return !a.message.valid() && b.message.valid();
  });
  if (static_cast<std::int64_t>(hits.size()) <= options.offset) return std::vector<SearchHit>{};
  const auto begin = hits.begin() + options.offset;
  const auto end = hits.begin() + std::min<std::int64_t>(static_cast<std::int64_t>(hits.size()), wanted);
  return std::vector<SearchHit>(std::make_move_iterator(begin), std::make_move_iterator(end));
}

}  // namespace hearth::storage
