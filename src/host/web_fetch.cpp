// host.web_fetch: a page as text for the cell (issue 30 part 3).
#include <algorithm>
#include <cmath>

#include "base/ascii.h"
#include "base/utf8.h"
#include "host/dispatcher.h"
#include "host/web_client.h"
#include "host/web_markdown.h"
#include "host/web_methods.h"
#include "host/web_spec.h"

namespace o4s::host {

namespace {

// What a page may weigh before it is cut (its text is cut again at max_chars).
constexpr std::int64_t kFetchMaxBytes = 10LL << 20;
constexpr long long kDefaultMaxChars = 20'000;
constexpr long long kMaxMaxChars = 1'000'000;

bool is_text_type(const std::string& content_type) {
  const std::string type = ascii::lowered(content_type.substr(0, content_type.find(';')));
  if (type.empty() || type.rfind("text/", 0) == 0) return true;
  for (std::string_view suffix :
       {"/json", "+json", "/xml", "+xml", "/javascript", "/x-yaml", "/yaml", "/csv", "/x-ndjson"}) {
    if (type.size() > suffix.size() && type.substr(type.size() - suffix.size()) == suffix) {
      return true;
    }
  }
  return false;
}

// Latin-1 (and its superset's printable part, Windows-1252) to UTF-8;
// anything else is read as UTF-8, invalid bytes replaced.
std::string decoded_body(const std::string& body, const std::string& content_type) {
  const std::string type = ascii::lowered(content_type);
  const bool latin1 = type.find("iso-8859-1") != std::string::npos ||
                      type.find("latin1") != std::string::npos ||
                      type.find("windows-1252") != std::string::npos;
  if (!latin1) return utf8::replace_invalid(body);
  std::string out;
  out.reserve(body.size());
  for (char byte : body) {
    const auto c = static_cast<unsigned char>(byte);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::string page_text(const std::string& body, const std::string& content_type,
                      const std::string& format) {
  std::string text = decoded_body(body, content_type);
  if (format == "html" || !looks_like_html(content_type, text)) return text;
  return html_to_text(text, format == "text" ? PageFormat::kText : PageFormat::kMarkdown);
}

}  // namespace

Result<Json> web_fetch(HostDispatcher& host, const Json& args, const CallContext& context) {
  auto spec = web_spec("web_fetch", args, 30);
  if (!spec) return std::move(spec).error();
  const Json& raw = args.empty() || !args[0].is_object() ? Json::object() : args[0];
  auto max_chars = bounded_integer("web_fetch", raw, "max_chars", kDefaultMaxChars, kMaxMaxChars);
  if (!max_chars) return std::move(max_chars).error();
  std::string format = ascii::lowered(raw.value("format", std::string("markdown")));
  if (format != "markdown" && format != "text" && format != "html") {
    return handler_error(
        HandlerErrorKind::kValue,
        "web_fetch: format must be 'markdown', 'text' or 'html', not '" + format + "'");
  }
  auto policy = session_egress_policy(host, context);
  if (!policy) return Json{{"error", "web_fetch: " + policy.error().message}};

  WebRequest request = spec->request;
  request.max_bytes = kFetchMaxBytes;
  request.truncate_at_max = true;
  request.cancelled = context.interrupted;  // an interrupted cell's fetch stops
  std::string body;
  WebResponse response = web_get(*policy, request, [&body](std::string_view chunk) {
    body.append(chunk);
    return true;
  });
  if (response.failure != WebFailure::kNone) {
    return Json{
        {"error", "web_fetch: " + spec->request.url.substr(0, 500) + ": " + response.message}};
  }
  if (!is_text_type(response.content_type)) {
    return Json{{"error", "web_fetch: " + response.final_url + " is " + response.content_type +
                              ", not text; keep it as a file with host.web_download(url, path)"}};
  }
  std::string text = page_text(body, response.content_type, format);
  const std::size_t chars = utf8::length(text);
  const bool cut = chars > static_cast<std::size_t>(*max_chars);
  if (cut) text = std::string(utf8::prefix(text, static_cast<std::size_t>(*max_chars)));
  return Json{{"url", spec->request.url},
              {"final_url", response.final_url},
              {"status", response.status},
              {"content_type", response.content_type},
              {"format", format},
              {"bytes", response.bytes},
              {"truncated", cut || response.truncated},
              {"redirects", response.redirects},
              {"egress", response.egress_basis},
              {"text", std::move(text)}};
}

}  // namespace o4s::host
