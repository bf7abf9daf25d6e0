#include "host/web_markdown.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "base/ascii.h"

namespace o4s::host {

namespace {

void append_utf8(std::string& out, std::uint32_t c) {
  if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The character references pages use most; others pass through as written.
constexpr std::array<std::pair<std::string_view, std::uint32_t>, 14> kEntities = {{
    {"amp", '&'},
    {"lt", '<'},
    {"gt", '>'},
    {"quot", '"'},
    {"apos", '\''},
    {"nbsp", ' '},
    {"copy", 0xA9},
    {"reg", 0xAE},
    {"mdash", 0x2014},
    {"ndash", 0x2013},
    {"hellip", 0x2026},
    {"rsquo", 0x2019},
    {"lsquo", 0x2018},
    {"middot", 0xB7},
}};

// Decodes the reference at text[i] == '&'; returns the bytes consumed (0: none).
std::size_t decode_entity(std::string_view text, std::size_t i, std::string& out) {
  const std::size_t semi = text.find(';', i);
  if (semi == std::string_view::npos || semi - i > 10) return 0;
  std::string_view name = text.substr(i + 1, semi - i - 1);
  if (!name.empty() && name[0] == '#') {
    const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
    std::uint32_t value = 0;
    std::string_view digits = name.substr(hex ? 2 : 1);
    if (digits.empty()) return 0;
    for (char c : digits) {
      int d = ascii::is_digit(c)          ? c - '0'
              : hex && ascii::is_alpha(c) ? ascii::to_lower(c) - 'a' + 10
                                          : -1;
      if (d < 0 || d >= (hex ? 16 : 10) || value > 0x10FFFF) return 0;
      value = value * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
    }
    append_utf8(out, value);
    return semi - i + 1;
  }
  for (const auto& [entity, value] : kEntities) {
    if (name == entity) {
      append_utf8(out, value);
      return semi - i + 1;
    }
  }
  return 0;
}

struct Tag {
  std::string name;  // lower case, without '/'
  bool closing = false;
  std::string href;  // a's href, img's src
  std::string alt;   // img's alt
};

std::string attribute(std::string_view tag, std::string_view key) {
  const std::string lowered = ascii::lowered(tag);
  std::size_t at = 0;
  while ((at = lowered.find(key, at)) != std::string::npos) {
    const bool starts =
        at > 0 && (lowered[at - 1] == ' ' || lowered[at - 1] == '\t' || lowered[at - 1] == '\n');
    std::size_t eq = at + key.size();
    while (eq < tag.size() && tag[eq] == ' ') ++eq;
    if (!starts || eq >= tag.size() || tag[eq] != '=') {
      at += key.size();
      continue;
    }
    std::size_t begin = eq + 1;
    while (begin < tag.size() && tag[begin] == ' ') ++begin;
    if (begin < tag.size() && (tag[begin] == '"' || tag[begin] == '\'')) {
      const std::size_t end = tag.find(tag[begin], begin + 1);
      return std::string(
          tag.substr(begin + 1, end == std::string_view::npos ? end : end - begin - 1));
    }
    const std::size_t end = tag.find_first_of(" \t\n>", begin);
    return std::string(tag.substr(begin, end == std::string_view::npos ? end : end - begin));
  }
  return {};
}

Tag parse_tag(std::string_view inner) {
  Tag tag;
  std::size_t i = 0;
  if (i < inner.size() && inner[i] == '/') {
    tag.closing = true;
    ++i;
  }
  while (i < inner.size() && (ascii::is_alnum(inner[i]))) tag.name += ascii::to_lower(inner[i++]);
  if (tag.name == "a") tag.href = attribute(inner, "href");
  if (tag.name == "img") {
    tag.href = attribute(inner, "src");
    tag.alt = attribute(inner, "alt");
  }
  return tag;
}

class Converter {
 public:
  explicit Converter(PageFormat format) : markdown_(format == PageFormat::kMarkdown) {}

  void text(std::string_view raw) {
    for (std::size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '&') {
        std::string decoded;
        if (std::size_t used = decode_entity(raw, i, decoded)) {
          emit(decoded);
          i += used - 1;
          continue;
        }
      }
      if (pre_ == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f')) {
        pending_space_ = true;
        continue;
      }
      emit(std::string_view(&raw[i], 1));
    }
  }

  void tag(const Tag& tag) {
    const std::string& n = tag.name;
    if (n.size() == 2 && n[0] == 'h' && n[1] >= '1' && n[1] <= '6') {
      block(2);
      if (!tag.closing && markdown_)
        out_ += std::string(static_cast<std::size_t>(n[1] - '0'), '#') + " ";
    } else if (n == "p" || n == "div" || n == "section" || n == "article" || n == "table" ||
               n == "ul" || n == "ol" || n == "blockquote" || n == "header" || n == "footer" ||
               n == "main" || n == "nav" || n == "figure" || n == "dl") {
      block(2);
    } else if (n == "br" || n == "tr" || n == "dt" || n == "dd") {
      block(1);
    } else if (n == "li" && !tag.closing) {
      block(1);
      out_ += markdown_ ? "- " : "* ";
    } else if (n == "hr") {
      block(2);
      if (markdown_) out_ += "---";
      block(2);
    } else if (n == "pre") {
      preformatted(tag.closing);
    } else if (n == "td" || n == "th") {
      if (!tag.closing) emit(markdown_ ? " | " : "\t");
    } else if (n == "a") {
      link(tag);
    } else if (markdown_ && (n == "strong" || n == "b")) {
      emit("**");
    } else if (markdown_ && (n == "em" || n == "i")) {
      emit("*");
    } else if (markdown_ && n == "code" && pre_ == 0) {
      emit("`");
    } else if (n == "img" && markdown_ && !tag.alt.empty()) {
      emit("![" + tag.alt + "](" + tag.href + ")");
    }
  }

  std::string finish() {
    std::string cleaned;
    int newlines = 0;
    for (char c : out_) {
      if (c == '\n') {
        while (!cleaned.empty() && cleaned.back() == ' ') cleaned.pop_back();
        if (++newlines > 2) continue;
      } else {
        newlines = 0;
      }
      cleaned += c;
    }
    const auto first = cleaned.find_first_not_of("\n ");
    const auto last = cleaned.find_last_not_of("\n ");
    return first == std::string::npos ? std::string() : cleaned.substr(first, last - first + 1);
  }

 private:
  void emit(std::string_view piece) {
    if (pending_space_ && !out_.empty() && out_.back() != '\n' && out_.back() != ' ') out_ += ' ';
    pending_space_ = false;
    out_.append(piece);
  }

  void block(int newlines) {
    pending_space_ = false;
    int have = 0;
    for (auto it = out_.rbegin(); it != out_.rend() && *it == '\n'; ++it) ++have;
    if (out_.empty()) return;
    for (; have < newlines; ++have) out_ += '\n';
  }

  // Whitespace inside is kept; in Markdown the block is fenced.
  void preformatted(bool closing) {
    if (!closing) {
      block(2);
      if (markdown_) out_ += "```\n";
      ++pre_;
      return;
    }
    if (pre_ > 0) --pre_;
    if (markdown_) {
      if (!out_.empty() && out_.back() != '\n') out_ += '\n';
      out_ += "```";
    }
    block(2);
  }

  void link(const Tag& tag) {
    if (!markdown_) return;
    if (!tag.closing) {
      link_href_ = tag.href;
      emit("[");
      return;
    }
    if (link_href_.empty() || link_href_.rfind("javascript:", 0) == 0) {
      out_ += "]";
    } else {
      out_ += "](" + link_href_ + ")";
    }
    link_href_.clear();
  }

  bool markdown_;
  std::string out_;
  bool pending_space_ = false;
  int pre_ = 0;
  std::string link_href_;
};

// Where "</name" next starts (any case) at or after `from`, or npos.
std::size_t find_close(std::string_view html, std::size_t from, std::string_view name) {
  for (std::size_t at = html.find("</", from); at != std::string_view::npos;
       at = html.find("</", at + 2)) {
    if (ascii::lowered(html.substr(at + 2, name.size())) == name) return at;
  }
  return std::string_view::npos;
}

bool skipped_element(std::string_view name) {
  return name == "script" || name == "style" || name == "noscript" || name == "template" ||
         name == "svg" || name == "head" || name == "iframe" || name == "object";
}

}  // namespace

std::string html_to_text(std::string_view html, PageFormat format) {
  Converter converter(format);
  std::size_t i = 0;
  while (i < html.size()) {
    const std::size_t open = html.find('<', i);
    converter.text(html.substr(i, open == std::string_view::npos ? open : open - i));
    if (open == std::string_view::npos) break;
    if (html.substr(open, 4) == "<!--") {
      const std::size_t end = html.find("-->", open + 4);
      i = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    const std::size_t close = html.find('>', open);
    if (close == std::string_view::npos) break;
    Tag tag = parse_tag(html.substr(open + 1, close - open - 1));
    i = close + 1;
    if (tag.name.empty()) continue;  // <!doctype>, <?xml?>, a stray '<'
    if (!tag.closing && skipped_element(tag.name)) {
      // Everything up to the matching close tag is not for reading.
      i = std::min(find_close(html, i, tag.name), html.size());
      const std::size_t past = html.find('>', i);
      i = past == std::string_view::npos ? html.size() : past + 1;
      continue;
    }
    converter.tag(tag);
  }
  return converter.finish();
}

bool looks_like_html(std::string_view content_type, std::string_view body) {
  const std::string type = ascii::lowered(content_type);
  if (!type.empty()) {
    return type.find("text/html") != std::string::npos ||
           type.find("application/xhtml") != std::string::npos;
  }
  const std::string head = ascii::lowered(body.substr(0, 512));
  return head.find("<html") != std::string::npos ||
         head.find("<!doctype html") != std::string::npos;
}

}  // namespace o4s::host
