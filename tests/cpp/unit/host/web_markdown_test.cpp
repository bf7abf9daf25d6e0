// A fetched page as Markdown or plain text.
#include "host/web_markdown.h"

#include <gtest/gtest.h>

namespace o4s::host {
namespace {

constexpr const char* kPage =
    "<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>"
    "<script>alert('no')</script><h1>Hemoglobin &amp; friends</h1>"
    "<p>See <a href=\"https://www.uniprot.org/P69905\">P69905</a>, <b>bold</b> and "
    "<em>soft</em>.</p><ul><li>one</li><li>two&#x21;</li></ul><pre>a  b\n  c</pre>"
    "<!-- <p>hidden</p> --></body></html>";

TEST(HtmlToText, MarkdownKeepsStructureAndDropsScripts) {
  const std::string text = html_to_text(kPage, PageFormat::kMarkdown);
  EXPECT_EQ(text,
            "# Hemoglobin & friends\n\n"
            "See [P69905](https://www.uniprot.org/P69905), **bold** and *soft*.\n\n"
            "- one\n- two!\n\n```\na  b\n  c\n```");
}

TEST(HtmlToText, PlainTextHasNoMarkup) {
  const std::string text = html_to_text(kPage, PageFormat::kText);
  EXPECT_EQ(text.find("alert"), std::string::npos);
  EXPECT_EQ(text.find("**"), std::string::npos);
  EXPECT_NE(text.find("See P69905, bold and soft."), std::string::npos);
}

TEST(HtmlToText, BrokenMarkupNeverFails) {
  EXPECT_EQ(html_to_text("<p>open <b>never closed <a href='x'", PageFormat::kMarkdown),
            "open **never closed");
  EXPECT_EQ(html_to_text("<script>unterminated", PageFormat::kMarkdown), "");
  EXPECT_TRUE(looks_like_html("text/html; charset=utf-8", ""));
  EXPECT_FALSE(looks_like_html("application/json", "<html>"));
}

}  // namespace
}  // namespace o4s::host
