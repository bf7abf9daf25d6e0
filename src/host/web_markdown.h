// A fetched HTML page as text a model reads well: Markdown (headings,
// paragraphs, lists, links, emphasis, code, tables as pipe rows) or plain
// text, with scripts, styles and the head's metadata dropped and character
// references decoded. Tolerant of broken markup; never fails.
#pragma once

#include <string>
#include <string_view>

namespace o4s::host {

enum class PageFormat { kMarkdown, kText };

std::string html_to_text(std::string_view html, PageFormat format);

// Whether a Content-Type (or, without one, the body's start) is HTML.
bool looks_like_html(std::string_view content_type, std::string_view body);

}  // namespace o4s::host
