#include "hearth/documents/extract.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace hearth::documents {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Result<ExtractedText> as_text(const std::filesystem::path& path, std::string_view bytes, std::string kind,
                              TextKind structure) {
  // A UTF-8 byte-order mark is not text.
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
  HEARTH_CHECK(check_utf8(bytes, path.string()));
  if (bytes.find('\0') != std::string_view::npos) {
    return make_error(ErrorCode::Unsupported, "'" + path.string() + "' holds NUL bytes: not a text file");
  }
  ExtractedText out;
  out.kind = std::move(kind);
  out.structure = structure;
  out.pages.push_back(PageText{std::nullopt, std::string(bytes)});
  return out;
}

// Appends the UTF-8 encoding of a code point (invalid ones become U+FFFD).
void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes "&amp;" style references at `i` (pointing at '&'); returns the bytes used.
std::size_t decode_reference(std::string_view s, std::size_t i, std::string& out) {
  const std::size_t semi = s.find(';', i);
  if (semi == std::string_view::npos || semi - i > 10) {
    out += '&';
    return 1;
  }
  const std::string_view name = s.substr(i + 1, semi - i - 1);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kNamed{{
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"},
      {"nbsp", " "}, {"mdash", "\xE2\x80\x94"}, {"ndash", "\xE2\x80\x93"}, {"hellip", "\xE2\x80\xA6"}}};
  for (const auto& [key, value] : kNamed) {
    if (name == key) {
      out += value;
      return semi - i + 1;
    }
  }
  if (name.size() >= 2 && name[0] == '#') {
    std::uint32_t cp = 0;
    const bool hex = name[1] == 'x' || name[1] == 'X';
    const std::string_view digits = name.substr(hex ? 2 : 1);
    bool ok = !digits.empty();
    for (char c : digits) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : hex && std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(c) - 'a' + 10
                                                                          : -1;
      if (d < 0 || cp > 0x10FFFF) {
        ok = false;
        break;
      }
      cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
    }
    if (ok) {
      append_utf8(out, cp);
      return semi - i + 1;
    }
  }
  out += '&';
  return 1;
}

// The tag's lower-case name at `s[i]` (after '<' and an optional '/').
std::string tag_name(std::string_view s, std::size_t i) {
  std::string name;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) != 0) && name.size() < 16) {
    name += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    ++i;
  }
  return name;
}

bool is_block_tag(const std::string& name) {
  static constexpr std::array<std::string_view, 18> kBlocks{"p", "div", "br", "li", "ul", "ol", "tr", "table",
                                                             "section", "article", "header", "footer", "blockquote",
                                                             "dt", "dd", "hr", "nav", "main"};
  return std::find(kBlocks.begin(), kBlocks.end(), name) != kBlocks.end();
}

}  // namespace

Status check_utf8(std::string_view bytes, std::string_view what) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      extra = 9;
    }
    bool ok = extra <= 3 && i + extra < bytes.size();
    for (std::size_t k = 1; ok && k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(bytes[i + k]);
      if ((d & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if (ok) {
      static constexpr std::uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[extra] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) {
      return make_error(ErrorCode::InvalidFormat, "'" + std::string(what) + "' is not UTF-8 text: invalid byte at offset " +
                                                      std::to_string(i));
    }
    i += extra + 1;
  }
  return {};
}

std::string html_to_text(std::string_view html) {
  std::string out;
  out.reserve(html.size() / 2);
  bool in_pre = false;
  std::size_t i = 0;
  auto new_block = [&out] {
    while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
    if (!out.empty() && !out.ends_with("\n\n")) out += out.ends_with('\n') ? "\n" : "\n\n";
  };
  while (i < html.size()) {
    const char c = html[i];
    if (c == '<') {
      if (html.substr(i, 4) == "<!--") {
        const std::size_t end = html.find("-->", i + 4);
        i = end == std::string_view::npos ? html.size() : end + 3;
        continue;
      }
      const bool closing = i + 1 < html.size() && html[i + 1] == '/';
      const std::string name = tag_name(html, i + (closing ? 2 : 1));
      const std::size_t end = html.find('>', i);
      if (end == std::string_view::npos) break;  // a cut-off tag: nothing more to read
      if (!closing && (name == "script" || name == "style" || name == "head" || name == "template")) {
        const std::string close = "</" + name;
        std::size_t stop = end;
        // Case-insensitive search for the closing tag.
        while (stop != std::string_view::npos) {
          stop = html.find("</", stop + 1);
          if (stop != std::string_view::npos && lower(html.substr(stop, close.size())) == close) break;
        }
        const std::size_t after = stop == std::string_view::npos ? std::string_view::npos : html.find('>', stop);
        i = after == std::string_view::npos ? html.size() : after + 1;
        continue;
      }
      if (name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') {
        new_block();
        if (!closing) out += std::string(static_cast<std::size_t>(name[1] - '0'), '#') + " ";
      } else if (name == "pre") {
        if (!closing) {
          new_block();
          out += "```\n";
        } else {
          if (!out.ends_with('\n')) out += '\n';
          out += "```";
          new_block();
        }
        in_pre = !closing;
      } else if (name == "li" && !closing) {
        new_block();
        out += "- ";
      } else if (is_block_tag(name)) {
        if (name == "br") {
          out += '\n';
        } else {
          new_block();
        }
      } else if (name == "td" || name == "th") {
        out += ' ';
      }
      i = end + 1;
      continue;
    }
    if (c == '&') {
      i += decode_reference(html, i, out);
      continue;
    }
    if (!in_pre && (c == '\n' || c == '\r' || c == '\t' || c == ' ')) {
      if (!out.empty() && out.back() != ' ' && out.back() != '\n') out += ' ';
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

Extractors Extractors::builtin() {
  Extractors e;
  auto text = [](std::string kind, TextKind structure) {
    return [kind, structure](const std::filesystem::path& path, std::string_view bytes) {
      return as_text(path, bytes, kind, structure);
    };
  };
  for (const char* ext : {".txt", ".text", ".log", ".rst", ".csv", ".tsv"}) e.add(ext, text("text", TextKind::Plain));
  for (const char* ext : {".md", ".markdown", ".mdown"}) e.add(ext, text("markdown", TextKind::Markdown));
  for (const char* ext : {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".py", ".js", ".ts", ".tsx", ".jsx",
                          ".java", ".kt", ".go", ".rs", ".rb", ".php", ".cs", ".swift", ".sh", ".bash", ".zsh",
                          ".pl", ".lua", ".sql", ".qml", ".cmake", ".json", ".yaml", ".yml", ".toml", ".ini",
                          ".xml", ".css", ".scss", ".m", ".r", ".scala", ".hs", ".ml", ".el", ".vim"}) {
    e.add(ext, text("code", TextKind::Code));
  }
  auto html = [](const std::filesystem::path& path, std::string_view bytes) -> Result<ExtractedText> {
    if (bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
    HEARTH_CHECK(check_utf8(bytes, path.string()));
    ExtractedText out;
    out.kind = "html";
    out.structure = TextKind::Markdown;
    out.pages.push_back(PageText{std::nullopt, html_to_text(bytes)});
    return out;
  };
  for (const char* ext : {".html", ".htm", ".xhtml"}) e.add(ext, html);
  return e;
}

void Extractors::add(std::string extension, Extractor extractor) {
  by_extension_[lower(extension)] = std::move(extractor);
}

bool Extractors::supports(const std::filesystem::path& path) const {
  return by_extension_.contains(lower(path.extension().string()));
}

Result<ExtractedText> Extractors::extract(const std::filesystem::path& path, std::string_view bytes) const {
  const auto it = by_extension_.find(lower(path.extension().string()));
  if (it == by_extension_.end()) {
    return make_error(ErrorCode::Unsupported, "'" + path.string() + "': Hearth cannot read '" +
                                                  path.extension().string() + "' files");
  }
  return it->second(path, bytes);
}

}  // namespace hearth::documents
