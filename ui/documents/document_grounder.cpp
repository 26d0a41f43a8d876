#include "documents/document_grounder.h"

#include <hearth/documents/extract.h>
#include <hearth/engine/chat/grounding.h>
#include <hearth/storage/sources.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace hearth::ui {
namespace {

constexpr std::int64_t kTopPassages = 8;

std::string source_label(const SourceRecord& s) {
  std::string label = std::filesystem::path(s.path).filename().string();
  if (s.page) label += ", page " + std::to_string(*s.page);
  if (s.line_first == s.line_last) {
    label += ", line " + std::to_string(s.line_first);
  } else if (s.line_last > s.line_first) {
    label += ", lines " + std::to_string(s.line_first) + "-" + std::to_string(s.line_last);
  }
  return label;
}

Grounding build_turn(const std::string& question, std::vector<SourceRecord> sources, std::int64_t budget_tokens) {
  std::vector<chat::GroundingPassage> passages;
  for (const SourceRecord& s : sources) passages.push_back({source_label(s), s.text});
  const chat::GroundedTurn turn =
      chat::ground_question(question, passages, budget_tokens, &DocumentGrounder::estimate_tokens);
  Grounding out;
  out.turn_text = turn.text;
  out.source_tokens = turn.passage_tokens;
  for (std::size_t k = 0; k < turn.included.size(); ++k) {
    SourceRecord s = sources[turn.included[k]];
    s.number = static_cast<int>(k + 1);
    out.sources.push_back(std::move(s));
  }
  return out;
}

// The whole text of a file, read again through the extractors, or nullopt.
std::optional<std::string> whole_text(const std::string& path, const documents::Extractors& extractors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto text = extractors.extract(path, bytes);
  if (!text.ok()) return std::nullopt;
  std::string joined;
  for (const auto& page : text->pages) {
    if (!joined.empty()) joined += "\n\n";
    joined += page.text;
  }
  return joined;
}

std::int64_t line_count(const std::string& text) {
  std::int64_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

}  // namespace

void DocumentGrounder::set_embedding(std::shared_ptr<PassageEmbedding> embedding) {
  embedding_ = std::move(embedding);
  retriever_.reset();
}

storage::Libraries& DocumentGrounder::libraries(storage::Database& db) {
  if (bound_ != &db) {
    bound_ = &db;
    retriever_.reset();
    libraries_ = std::make_unique<storage::Libraries>(db);
  }
  return *libraries_;
}

Result<std::vector<SourceRecord>> DocumentGrounder::retrieve(storage::Database& db,
                                                             const std::vector<storage::LibraryId>& attached,
                                                             const std::string& question, std::int64_t budget_tokens,
                                                             bool* keyword_only) {
  storage::Libraries& libs = libraries(db);
  std::vector<SourceRecord> out;

  // Vectors are only comparable with the model that made them.
  bool vectors = embedding_ != nullptr;
  std::int64_t documents = 0;
  std::optional<storage::DocumentRecord> only;
  std::string only_library;
  for (storage::LibraryId id : attached) {
    HEARTH_TRY(storage::Library library, libs.get(id));
    if (!embedding_ || library.embedding_model != embedding_->identity() || library.embedding_dim != embedding_->dim()) {
      vectors = false;
    }
    // Two are enough to know it is not a single file.
    HEARTH_TRY(auto docs, libs.indexed_documents(id, 2));
    for (auto& d : docs) {
      ++documents;
      only = d;
      only_library = library.name;
    }
  }
  *keyword_only = !vectors;

  // One file that fits goes in whole: the model reads all of it.
  if (documents == 1 && only) {
    if (auto text = whole_text(only->info.path, extractors_)) {
      if (estimate_tokens(*text) + 64 <= budget_tokens) {
        out.push_back(SourceRecord{1, only_library, only->info.path, std::nullopt, 1, line_count(*text), *text});
        return out;
      }
    }
  }

  if (!retriever_) {
    std::shared_ptr<PassageEmbedding> embedding = embedding_;
    documents::QueryEmbedder embed;
    if (embedding) embed = [embedding](std::string_view q) { return embedding->embed_query(q); };
    retriever_ = std::make_unique<documents::Retriever>(libs, std::move(embed));
  }
  documents::RetrievalOptions options;
  options.mode = vectors ? documents::RetrievalMode::Hybrid : documents::RetrievalMode::Keyword;
  options.top_k = kTopPassages;
  HEARTH_TRY(auto hits, retriever_->search(attached, question, options));
  std::vector<storage::ChunkId> ids;
  for (const auto& h : hits) ids.push_back(h.chunk);
  HEARTH_TRY(auto chunks, libs.chunks(ids));
  std::map<storage::LibraryId, std::string> names;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const storage::ChunkRecord& c = chunks[i];
    if (!names.contains(c.library)) {
      HEARTH_TRY(storage::Library library, libs.get(c.library));
      names[c.library] = library.name;
    }
    std::string text = c.heading.empty() ? c.text : c.heading + "\n\n" + c.text;
    out.push_back(SourceRecord{static_cast<int>(i + 1), names[c.library], c.document_path, c.page, c.line_first,
                               c.line_last, std::move(text)});
  }
  return out;
}

Result<std::optional<Grounding>> DocumentGrounder::ground(storage::Database& db, ConversationKey conversation,
                                                          MessageKey message, const std::string& question,
                                                          std::int64_t budget_tokens) {
  storage::Sources store(db);
  const storage::MessageId mid(message.value);
  HEARTH_TRY(auto stored, store.of(mid));
  if (!stored.empty()) {
    // Sent before (a regenerated reply): the same sources, as the model saw them.
    std::vector<SourceRecord> sources;
    for (const auto& s : stored) {
      sources.push_back(SourceRecord{static_cast<int>(s.ordinal), s.library_name, s.document_path, s.page,
                                     s.line_first, s.line_last, s.text});
    }
    return std::optional<Grounding>(build_turn(question, std::move(sources), budget_tokens));
  }
  HEARTH_TRY(auto attached, store.attached(storage::ConversationId(conversation.value)));
  if (attached.empty()) return std::optional<Grounding>();
  bool keyword_only = false;
  HEARTH_TRY(auto candidates, retrieve(db, attached, question, budget_tokens, &keyword_only));
  Grounding grounding = build_turn(question, std::move(candidates), budget_tokens);
  grounding.keyword_only = keyword_only;
  std::vector<storage::MessageSource> rows;
  for (const SourceRecord& s : grounding.sources) {
    rows.push_back(storage::MessageSource{s.number, storage::ChunkId{}, s.library, s.path, s.page, s.line_first,
                                          s.line_last, s.text, 0.0});
  }
  HEARTH_CHECK(store.put(mid, rows));
  return std::optional<Grounding>(std::move(grounding));
}

}  // namespace hearth::ui
