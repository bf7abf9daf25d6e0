#include "mcp/execution_result.h"

#include <algorithm>

#include "base/utf8.h"
#include "mcp/base64.h"

namespace o4s::mcp {

namespace {

constexpr std::size_t kMaxImages = 8;
constexpr std::size_t kMaxImageBytes = 1u << 20;

// The code-point suffix of `text` holding `count` code points.
std::string_view tail_chars(std::string_view text, std::size_t count) {
  std::size_t seen = 0;
  std::size_t i = text.size();
  while (i > 0 && seen < count) {
    --i;
    if (!utf8::is_continuation(text[i])) ++seen;
  }
  return text.substr(i);
}

struct Images {
  Json blocks = Json::array();
  Json summaries = Json::array();
  std::size_t dropped = 0;
};

Images collect_images(const std::vector<Json>& displays) {
  Images images;
  for (std::size_t i = 0; i < displays.size(); ++i) {
    const Json& data = displays[i];
    Json summary{{"index", i}, {"mime_types", Json::array()}};
    for (const auto& [mime, value] : data.items()) summary["mime_types"].push_back(mime);
    if (data.contains("text/plain")) summary["text"] = text_of(data["text/plain"]).substr(0, 200);
    for (const char* mime : {"image/png", "image/jpeg"}) {
      auto it = data.find(mime);
      if (it == data.end()) continue;
      if (it->is_object()) {  // over the bound when it came (slim_display)
        ++images.dropped;
        break;
      }
      std::string encoded = text_of(*it);
      // Jupyter's base64 may carry line breaks; MCP's data is one string.
      std::erase_if(encoded, [](char c) { return c == '\n' || c == '\r'; });
      if (images.blocks.size() < kMaxImages && base64_decoded_size(encoded) <= kMaxImageBytes) {
        images.blocks.push_back(Json{{"type", "image"}, {"data", encoded}, {"mimeType", mime}});
        summary["image"] = true;
      } else {
        ++images.dropped;
      }
      break;
    }
    images.summaries.push_back(std::move(summary));
  }
  return images;
}

// The error with its evalue and its traceback (joined, one string per
// line kept) each cut to `max_chars`; `cut` counts what went.
Json cut_error(const Json& error, std::size_t max_chars, std::size_t& cut) {
  cut = 0;
  if (!error.is_object()) return error;
  Json out = error;
  std::size_t evalue_cut = 0;
  if (auto evalue = out.find("evalue"); evalue != out.end() && evalue->is_string()) {
    *evalue = head_and_tail(evalue->get<std::string>(), max_chars, "", evalue_cut);
  }
  std::string traceback;
  if (auto lines = out.find("traceback"); lines != out.end() && lines->is_array()) {
    for (const auto& line : *lines) {
      if (line.is_string()) traceback += line.get<std::string>() + "\n";
    }
  }
  std::size_t traceback_cut = 0;
  traceback = head_and_tail(traceback, max_chars, "", traceback_cut);
  if (traceback_cut > 0) {
    Json lines = Json::array();
    std::size_t start = 0;
    while (start < traceback.size()) {
      std::size_t end = std::min(traceback.find('\n', start), traceback.size());
      lines.push_back(traceback.substr(start, end - start));
      start = end + 1;
    }
    out["traceback"] = std::move(lines);
  }
  cut = evalue_cut + traceback_cut;
  return out;
}

}  // namespace

std::string head_and_tail(const std::string& text, std::size_t max_chars, const std::string& where,
                          std::size_t& cut) {
  cut = 0;
  std::size_t length = utf8::length(text);
  if (length <= max_chars) return text;
  std::size_t head = max_chars / 2;
  std::size_t tail = max_chars - head;
  cut = length - head - tail;
  std::string out(utf8::prefix(text, head));
  out += "\n[... " + std::to_string(cut) + " characters cut here";
  out += where.empty() ? std::string(" ...]\n") : "; the whole output is at " + where + " ...]\n";
  out += tail_chars(text, tail);
  return out;
}

namespace {

// Each part of the outcome within max_output_chars, and links to the whole
// of a cut stream.
struct CutOutcome {
  std::string out, err, result;
  Json error;
  std::size_t stdout_cut = 0, stderr_cut = 0, result_cut = 0, error_cut = 0;
  Json links = Json::array();
};

CutOutcome cut_outcome(const ExecutionSnapshot& snap, std::size_t max_chars,
                       ResourceRegistry& resources) {
  CutOutcome cut;
  auto cut_stream = [&](const std::string& stream, const std::string& text, std::size_t& count) {
    if (utf8::length(text) <= max_chars) return text;
    // The whole is kept only once the cell is over (a running cell's
    // output still grows; get_execution shows it later).
    std::string uri = snap.status == "running"
                          ? std::string()
                          : resources.spill_output(snap.kernel_id, snap.id, stream, text);
    if (!uri.empty()) {
      cut.links.push_back(Json{{"type", "resource_link"},
                               {"uri", uri},
                               {"name", snap.id + "-" + stream + ".txt"},
                               {"mimeType", "text/plain"},
                               {"description", "the whole " + stream + " of the cell"}});
    }
    return head_and_tail(text, max_chars, uri, count);
  };
  cut.out = cut_stream("stdout", snap.stdout_text, cut.stdout_cut);
  cut.err = cut_stream("stderr", snap.stderr_text, cut.stderr_cut);
  // The last value and the error obey the same bound (a 50 MB repr is no
  // better an answer than 50 MB of stdout).
  cut.result = head_and_tail(snap.result, max_chars, "", cut.result_cut);
  cut.error = cut_error(snap.error, max_chars, cut.error_cut);
  return cut;
}

// The one text block: output, the last value or the error, and notes.
std::string result_text(const ExecutionSnapshot& snap, const CutOutcome& cut,
                        const Images& images) {
  std::string text = cut.out;
  auto section = [&text](const std::string& body) {
    if (body.empty()) return;
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += body;
  };
  section(cut.err);
  section(cut.result);
  if (cut.error.is_object()) {
    std::string traceback;
    for (const auto& line : cut.error["traceback"]) traceback += line.get<std::string>() + "\n";
    section(traceback);
  }
  if (images.dropped > 0) {
    section("[" + std::to_string(images.dropped) +
            " more image(s) not shown: at most 8 images of at most 1 MB each per result; save "
            "them with host.save_artifact to fetch them]");
  }
  if (snap.status == "running") {
    section("[execution " + snap.id + " is still running; get_execution gives its output so far]");
  } else if (snap.status == "timeout") {
    section("[the cell ran past its timeout_s and was interrupted; the kernel's variables remain]");
  }
  if (text.empty()) text = snap.status == "ok" ? "[no output]" : "[" + snap.status + "]";
  return text;
}

Json artifact_link(const ExecutionSnapshot& snap, const Json& artifact,
                   ResourceRegistry& resources) {
  std::string filename = artifact.value("filename", std::string("artifact"));
  std::string uri = resources.add_artifact(snap.kernel_id, artifact.value("version_id", ""),
                                           filename, artifact.value("path", ""));
  return Json{{"type", "resource_link"},
              {"uri", uri},
              {"name", filename},
              {"mimeType", mime_type_for(filename)},
              {"description", "an artifact the cell saved"}};
}

Json structured_content(const ExecutionSnapshot& snap, const CutOutcome& cut,
                        const Images& images) {
  Json artifacts = Json::array();
  for (const auto& artifact : snap.artifacts) {
    artifacts.push_back(Json{{"filename", artifact.value("filename", std::string("artifact"))},
                             {"artifact_id", artifact.value("artifact_id", "")},
                             {"version_id", artifact.value("version_id", "")}});
  }
  return Json{{"status", snap.status},
              {"execution_id", snap.id},
              {"kernel_id", snap.kernel_id},
              {"execution_count", snap.execution_count},
              {"stdout", cut.out},
              {"stderr", cut.err},
              {"result", cut.result.empty() ? Json(nullptr) : Json(cut.result)},
              {"error", cut.error},
              {"truncated",
               {{"stdout_chars", cut.stdout_cut},
                {"stderr_chars", cut.stderr_cut},
                {"result_chars", cut.result_cut},
                {"error_chars", cut.error_cut}}},
              {"displays", images.summaries},
              {"files_read", snap.files_read},
              {"artifacts", artifacts},
              {"usage", snap.usage}};
}

}  // namespace

Json execution_tool_result(const ExecutionSnapshot& snap, std::size_t max_output_chars,
                           ResourceRegistry& resources) {
  CutOutcome cut = cut_outcome(snap, max_output_chars, resources);
  Images images = collect_images(snap.displays);
  Json content = Json::array({Json{{"type", "text"}, {"text", result_text(snap, cut, images)}}});
  for (auto& block : images.blocks) content.push_back(std::move(block));
  for (auto& link : cut.links) content.push_back(std::move(link));
  for (const auto& artifact : snap.artifacts) {
    content.push_back(artifact_link(snap, artifact, resources));
  }
  // The error is the cell's, not the tool's: the call itself succeeded.
  return Json{{"content", std::move(content)},
              {"structuredContent", structured_content(snap, cut, images)}};
}

}  // namespace o4s::mcp
