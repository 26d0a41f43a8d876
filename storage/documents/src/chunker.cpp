#include "hearth/documents/chunker.h"

#include <algorithm>

namespace hearth::documents {
namespace {

// A run of lines that belongs together: a paragraph, a list item, a fenced code
// block, or a heading line.
struct Block {
  std::int64_t line_first = 1;
  std::int64_t line_last = 1;
  std::string text;  // the lines joined by '\n'
  int heading_level = 0;  // 1..6 for a Markdown heading line, else 0
  std::string heading_title;
};

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\f'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '#')) s.remove_suffix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "## Title" -> level 2. Up to three spaces of indent, then 1-6 '#' and a space.
int heading_level(std::string_view line, std::string* title) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  std::size_t hashes = 0;
  while (i + hashes < line.size() && line[i + hashes] == '#') ++hashes;
  if (hashes == 0 || hashes > 6) return 0;
  const std::size_t after = i + hashes;
  if (after < line.size() && line[after] != ' ' && line[after] != '\t') return 0;
  *title = std::string(trim(line.substr(after)));
  return static_cast<int>(hashes);
}

bool is_fence(std::string_view line) {
  std::string_view t = line;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  return t.starts_with("```") || t.starts_with("~~~");
}

bool starts_list_item(std::string_view line) {
  std::string_view t = line;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ') return true;
  std::size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  return digits > 0 && digits + 1 < t.size() && (t[digits] == '.' || t[digits] == ')') && t[digits + 1] == ' ';
}

void append_line(Block& block, std::string_view line, std::int64_t number) {
  if (block.text.empty() && block.line_first == 0) block.line_first = number;
  if (!block.text.empty() || block.line_last != 0) block.text += '\n';
  block.text += line;
  block.line_last = number;
}

// Lines into blocks. Blank lines end a block; in Markdown, a heading line is a block
// of its own, a fenced code block is one block (blank lines inside included), and a
// list item starts a new block.
std::vector<Block> to_blocks(std::string_view text, TextKind kind) {
  const auto lines = split_lines(text);
  std::vector<Block> blocks;
  Block current{0, 0, {}, 0, {}};
  auto flush = [&] {
    if (current.line_last != 0) blocks.push_back(std::move(current));
    current = Block{0, 0, {}, 0, {}};
  };
  bool in_fence = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const auto number = static_cast<std::int64_t>(i + 1);
    if (kind == TextKind::Markdown) {
      if (in_fence) {
        append_line(current, line, number);
        if (is_fence(line)) {
          in_fence = false;
          flush();
        }
        continue;
      }
      if (is_fence(line)) {
        flush();
        in_fence = true;
        append_line(current, line, number);
        continue;
      }
      std::string title;
      if (const int level = heading_level(line, &title); level > 0) {
        flush();
        append_line(current, line, number);
        current.heading_level = level;
        current.heading_title = std::move(title);
        flush();
        continue;
      }
      if (starts_list_item(line)) flush();
    }
    if (is_blank(line)) {
      flush();
      continue;
    }
    append_line(current, line, number);
  }
  flush();
  return blocks;
}

// The byte length of the longest prefix of `s` no longer than `limit` that ends
// at a UTF-8 character boundary, preferring the last space before it.
std::size_t cut_point(std::string_view s, std::size_t limit) {
  if (s.size() <= limit) return s.size();
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  const std::size_t space = s.rfind(' ', cut);
  if (space != std::string_view::npos && space > limit / 2) return space + 1;
  return cut == 0 ? limit : cut;
}

// A block longer than max_chars becomes several, cut at line ends (and a single
// overlong line at a space or character boundary). Line numbers stay exact.
std::vector<Block> split_long(Block block, std::int64_t max_chars) {
  if (static_cast<std::int64_t>(block.text.size()) <= max_chars) return {std::move(block)};
  const auto limit = static_cast<std::size_t>(std::max<std::int64_t>(max_chars, 16));
  std::vector<Block> out;
  const auto lines = split_lines(block.text);
  Block part{0, 0, {}, 0, {}};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto number = block.line_first + static_cast<std::int64_t>(i);
    std::string_view line = lines[i];
    if (part.line_last != 0 && part.text.size() + 1 + line.size() > limit) {
      out.push_back(std::move(part));
      part = Block{0, 0, {}, 0, {}};
    }
    while (line.size() > limit) {
      const std::size_t cut = cut_point(line, limit);
      Block piece{0, 0, {}, 0, {}};
      append_line(piece, line.substr(0, cut), number);
      out.push_back(std::move(piece));
      line.remove_prefix(cut);
    }
    append_line(part, line, number);
  }
  if (part.line_last != 0) out.push_back(std::move(part));
  return out;
}

std::string heading_path(const std::vector<std::pair<int, std::string>>& stack) {
  std::string path;
  for (const auto& [level, title] : stack) {
    if (title.empty()) continue;
    if (!path.empty()) path += " > ";
    path += title;
  }
  return path;
}

class Packer {
 public:
  Packer(const ChunkerOptions& options, std::optional<std::int64_t> page, std::vector<Passage>& out)
      : options_(options), page_(page), out_(out) {}

  void add(const Block& block, const std::string& heading) {
    const bool too_big = size_ + 2 + block.text.size() > static_cast<std::size_t>(options_.target_chars);
    if (heading != heading_ || too_big) {
      if (fresh_ > 0) {
        emit(heading != heading_);
      } else {
        // Only the previous passage's overlap is pending: it is not worth a passage
        // of its own, and the new block does not fit beside it.
        pending_.clear();
        size_ = 0;
      }
    }
    heading_ = heading;
    pending_.push_back(&block);
    size_ += block.text.size() + (pending_.size() > 1 ? 2 : 0);
    ++fresh_;
  }

  // A new section starts: the passage so far is complete and nothing overlaps.
  void finish() { emit(true); }

 private:
  void emit(bool section_ends) {
    if (fresh_ == 0) {
      pending_.clear();
      size_ = 0;
      return;
    }
    fresh_ = 0;
    Passage passage;
    passage.heading = heading_;
    passage.page = page_;
    passage.line_first = pending_.front()->line_first;
    passage.line_last = pending_.back()->line_last;
    for (const Block* b : pending_) {
      if (!passage.text.empty()) passage.text += "\n\n";
      passage.text += b->text;
    }
    passage.token_estimate = static_cast<std::int64_t>((passage.text.size() + 3) / 4);
    out_.push_back(std::move(passage));
    // Overlap: keep the last blocks (whole, never a code block cut in two) that fit
    // the overlap, unless they are all there is (then the next passage would only
    // repeat this one).
    std::vector<const Block*> kept;
    std::size_t kept_size = 0;
    if (!section_ends) {
      for (auto it = pending_.rbegin(); it != pending_.rend() && kept.size() + 1 < pending_.size(); ++it) {
        if (kept_size + (*it)->text.size() > static_cast<std::size_t>(options_.overlap_chars)) break;
        kept.insert(kept.begin(), *it);
        kept_size += (*it)->text.size() + 2;
      }
    }
    pending_ = std::move(kept);
    size_ = kept_size;
  }

  const ChunkerOptions& options_;
  std::optional<std::int64_t> page_;
  std::vector<Passage>& out_;
  std::vector<const Block*> pending_;
  std::size_t size_ = 0;
  std::size_t fresh_ = 0;  // blocks pending that no earlier passage holds
  std::string heading_;
};

}  // namespace

std::vector<Passage> chunk_text(const std::vector<PageText>& pages, TextKind kind, const ChunkerOptions& options) {
  std::vector<Passage> out;
  std::vector<std::pair<int, std::string>> stack;  // open headings, outermost first
  for (const PageText& page : pages) {
    std::vector<Block> blocks;
    for (Block& block : to_blocks(page.text, kind)) {
      if (block.heading_level > 0) {
        blocks.push_back(std::move(block));
        continue;
      }
      for (Block& part : split_long(std::move(block), options.max_chars)) blocks.push_back(std::move(part));
    }
    Packer packer(options, page.page, out);
    for (const Block& block : blocks) {
      if (block.heading_level > 0) {
        packer.finish();
        while (!stack.empty() && stack.back().first >= block.heading_level) stack.pop_back();
        stack.emplace_back(block.heading_level, block.heading_title);
        continue;
      }
      packer.add(block, heading_path(stack));
    }
    packer.finish();
  }
  return out;
}

}  // namespace hearth::documents
