#include "lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "unicode_text.h"

namespace hearth::chat {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Newlines become "\n" and a single trailing newline is dropped, as the
// reference does with keep_trailing_newline off.
std::string normalize_source(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
    } else {
      out.push_back(in[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Error lex_error(int line, std::string_view what) {
  return make_error(ErrorCode::InvalidFormat, fmt::format("template line {}: {}", line, what));
}

// Python string-literal escapes (the reference decodes literals with them).
Result<std::string> unescape(std::string_view body, int line) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    char e = body[++i];
    auto hex = [&](size_t n) -> Result<uint32_t> {
      if (i + n >= body.size()) return lex_error(line, "truncated escape in string literal");
      uint32_t v = 0;
      for (size_t k = 1; k <= n; ++k) {
        char h = body[i + k];
        if (!std::isxdigit(static_cast<unsigned char>(h))) {
          return lex_error(line, "bad hex escape in string literal");
        }
        v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
      }
      i += n;
      return v;
    };
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      case '"': out.push_back('"'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case 'x': { HEARTH_TRY(uint32_t v, hex(2)); append_utf8(out, v); break; }
      case 'u': { HEARTH_TRY(uint32_t v, hex(4)); append_utf8(out, v); break; }
      case 'U': {
        HEARTH_TRY(uint32_t v, hex(8));
        if (v > 0x10FFFF) return lex_error(line, "escape outside Unicode in string literal");
        append_utf8(out, v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            v = v * 8 + static_cast<uint32_t>(body[++i] - '0');
          }
          append_utf8(out, v);
        } else {
          out.push_back('\\');  // unknown escapes stay as written
          out.push_back(e);
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string src, const ParseClock& clock) : src_(std::move(src)), clock_(clock) {}

  Result<std::vector<Token>> run() {
    size_t pos = 0;
    bool line_starting = true;  // did the previous match end with a newline?
    while (pos < src_.size()) {
      HEARTH_CHECK(check_clock());
      size_t tag = find_tag(pos);
      std::string text = src_.substr(pos, tag - pos);
      if (tag == src_.size()) {
        emit_text(std::move(text), pos);
        break;
      }
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign != '-' && sign != '+') sign = '\0';
      if (sign == '-') {
        size_t keep = text.size();
        while (keep > 0 && is_ws(text[keep - 1])) --keep;
        text.resize(keep);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: drop indentation before a block or comment tag that
        // starts its line.
        size_t line_start = text.rfind('\n');
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        if (line_start > 0 || line_starting) {
          bool blank = true;
          for (size_t k = line_start; k < text.size(); ++k) blank = blank && is_ws(text[k]);
          if (blank) text.resize(line_start);
        }
      }
      emit_text(std::move(text), pos);
      line_ = line_at(tag);
      pos = tag + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        HEARTH_TRY(pos, skip_comment(pos));
      } else if (kind == '%' && is_raw(pos)) {
        HEARTH_TRY(pos, read_raw(pos));
      } else {
        HEARTH_TRY(pos, read_tag(pos, kind == '%'));
      }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    Token end;
    end.type = TokenType::End;
    end.line = line_at(src_.size());
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  int line_at(size_t pos) {
    while (line_pos_ < pos && line_pos_ < src_.size()) {
      if (src_[line_pos_] == '\n') ++line_count_;
      ++line_pos_;
    }
    return line_count_;
  }

  void emit_text(std::string text, size_t pos) {
    if (text.empty()) return;
    Token t;
    t.type = TokenType::Text;
    t.line = line_at(pos);
    t.text = std::move(text);
    tokens_.push_back(std::move(t));
  }

  // Every 1024 steps, fails once the parse deadline has passed.
  Status check_clock() {
    if ((++steps_ & 1023) != 0 || std::chrono::steady_clock::now() <= clock_.deadline) return {};
    return make_error(ErrorCode::LimitExceeded, fmt::format("template line {}: parsing took longer than {} ms",
                                                            line_, clock_.limit.count()));
  }

  void push(TokenType type, size_t pos, std::string text = {}) {
    Token t;
    t.type = type;
    t.line = line_at(pos);
    t.text = std::move(text);
    tokens_.push_back(std::move(t));
  }

  // After "-%}" all following whitespace goes; after "%}" (trim_blocks) one newline.
  size_t after_block_end(size_t pos, bool strip) const {
    if (strip) {
      while (pos < src_.size() && is_ws(src_[pos])) ++pos;
    } else if (pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    return pos;
  }

  Result<size_t> skip_comment(size_t pos) {
    size_t end = src_.find("#}", pos);
    if (end == std::string::npos) return lex_error(line_, "unterminated comment");
    const bool strip = end > pos && src_[end - 1] == '-';
    const bool keep = end > pos && src_[end - 1] == '+';
    size_t next = end + 2;
    if (strip) return after_block_end(next, true);
    if (keep) return next;
    return after_block_end(next, false);
  }

  bool is_raw(size_t pos) const {
    size_t p = pos;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    return src_.compare(p, 2, "%}") == 0 || src_.compare(p, 3, "-%}") == 0;
  }

  Result<size_t> read_raw(size_t pos) {
    size_t close = src_.find("%}", pos);
    const bool strip_after = src_[close - 1] == '-';
    size_t body = after_block_end(close + 2, strip_after);
    // Find "{%[-+]? endraw [-]?%}".
    for (size_t p = src_.find("{%", body); p != std::string::npos; p = src_.find("{%", p + 2)) {
      size_t q = p + 2;
      const bool strip_before = q < src_.size() && src_[q] == '-';
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) ++q;
      while (q < src_.size() && is_ws(src_[q])) ++q;
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q += 6;
      while (q < src_.size() && is_ws(src_[q])) ++q;
      const bool strip_end = q < src_.size() && src_[q] == '-';
      if (strip_end) ++q;
      if (src_.compare(q, 2, "%}") != 0) continue;
      std::string text = src_.substr(body, p - body);
      if (strip_before) {
        while (!text.empty() && is_ws(text.back())) text.pop_back();
      }
      emit_text(std::move(text), body);
      return after_block_end(q + 2, strip_end);
    }
    return lex_error(line_, "missing {% endraw %}");
  }

  Result<size_t> read_tag(size_t pos, bool block) {
    push(block ? TokenType::BlockBegin : TokenType::VarBegin, pos);
    const char closer = block ? '%' : '}';
    int balance = 0;  // end tags only count outside brackets, as in the reference
    while (true) {
      while (pos < src_.size() && is_ws(src_[pos])) ++pos;
      if (pos >= src_.size()) {
        return lex_error(line_, block ? "unexpected end of template inside {% ... %}"
                                      : "unexpected end of template inside {{ ... }}");
      }
      if (balance == 0) {
        const bool minus = src_[pos] == '-';
        const bool plus = block && src_[pos] == '+';
        size_t p = pos + ((minus || plus) ? 1 : 0);
        if (p + 1 < src_.size() && src_[p] == closer && src_[p + 1] == '}') {
          push(block ? TokenType::BlockEnd : TokenType::VarEnd, pos);
          size_t next = p + 2;
          if (minus) return after_block_end(next, true);
          if (block && !plus) return after_block_end(next, false);
          return next;
        }
      }
      HEARTH_TRY(pos, read_expr_token(pos, balance));
      HEARTH_CHECK(check_clock());
    }
  }

  Result<size_t> read_expr_token(size_t pos, int& balance) {
    const char c = src_[pos];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos;
      while (end < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) ++end;
      push(TokenType::Name, pos, src_.substr(pos, end - pos));
      return end;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return read_number(pos);
    if (c == '\'' || c == '"') {
      size_t end = pos + 1;
      while (end < src_.size() && src_[end] != c) end += src_[end] == '\\' ? 2 : 1;
      if (end >= src_.size()) return lex_error(line_at(pos), "unterminated string literal");
      HEARTH_TRY(std::string value, unescape(std::string_view(src_).substr(pos + 1, end - pos - 1), line_at(pos)));
      push(TokenType::String, pos, std::move(value));
      return end + 1;
    }
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (auto op : kTwo) {
      if (src_.compare(pos, 2, op) == 0) {
        push(TokenType::Operator, pos, std::string(op));
        return pos + 2;
      }
    }
    static constexpr std::string_view kOne = "+-*/%~<>=()[]{},.:|;";
    if (kOne.find(c) == std::string_view::npos) {
      return lex_error(line_at(pos), fmt::format("unexpected character '{}'", c));
    }
    if (c == '(' || c == '[' || c == '{') ++balance;
    if ((c == ')' || c == ']' || c == '}') && balance > 0) --balance;
    push(TokenType::Operator, pos, std::string(1, c));
    return pos + 1;
  }

  Result<size_t> read_number(size_t pos) {
    auto digits = [&](size_t p) {
      while (p < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[p])) ||
                                 (src_[p] == '_' && p + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p + 1]))))) ++p;
      return p;
    };
    size_t end = digits(pos);
    bool is_float = false;
    if (end + 1 < src_.size() && src_[end] == '.' && std::isdigit(static_cast<unsigned char>(src_[end + 1]))) {
      end = digits(end + 1);
      is_float = true;
    }
    if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t p = end + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
        end = digits(p);
        is_float = true;
      }
    }
    std::string text;
    for (size_t k = pos; k < end; ++k) if (src_[k] != '_') text.push_back(src_[k]);
    Token t;
    t.line = line_at(pos);
    t.text = text;
    if (is_float) {
      t.type = TokenType::Float;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.type = TokenType::Integer;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.int_value);
      if (ec != std::errc()) return lex_error(t.line, fmt::format("integer literal {} is too large", text));
    }
    tokens_.push_back(std::move(t));
    return end;
  }

  std::string src_;
  ParseClock clock_;
  uint32_t steps_ = 0;
  std::vector<Token> tokens_;
  int line_ = 1;
  size_t line_pos_ = 0;
  int line_count_ = 1;
};

}  // namespace

Result<std::vector<Token>> tokenize_template(std::string_view source, const ParseClock& clock) {
  Lexer lexer(normalize_source(source), clock);
  return lexer.run();
}

}  // namespace hearth::chat
