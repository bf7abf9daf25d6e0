#include "mcp/resources.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/file_io.h"
#include "base/unique_fd.h"
#include "base/utf8.h"
#include "mcp/base64.h"

namespace o4s::mcp {

namespace {

constexpr std::size_t kEntriesKept = 10000;
// resources/read answers in one message: bigger files are refused.
constexpr long long kReadMaxBytes = 16LL << 20;

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_text_type(const std::string& mime) {
  return mime.rfind("text/", 0) == 0 || mime == "application/json";
}

}  // namespace

std::string mime_type_for(const std::string& filename) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".svg", "image/svg+xml"},
      {".pdf", "application/pdf"},
      {".csv", "text/csv"},
      {".json", "application/json"},
      {".txt", "text/plain"},
      {".md", "text/markdown"},
      {".html", "text/html"},
      {".npy", "application/octet-stream"},
      {".parquet", "application/octet-stream"},
      {".pkl", "application/octet-stream"},
  };
  for (const auto& [suffix, type] : kTypes) {
    if (ends_with(filename, suffix)) return type;
  }
  return "application/octet-stream";
}

ResourceRegistry::ResourceRegistry(std::string data_dir) : data_dir_(std::move(data_dir)) {}

void ResourceRegistry::add(const std::string& uri, Entry entry) {
  std::lock_guard lock(mutex_);
  if (entries_.emplace(uri, std::move(entry)).second) order_.push_back(uri);
  while (order_.size() > kEntriesKept) {
    entries_.erase(order_.front());
    order_.erase(order_.begin());
  }
}

std::string ResourceRegistry::spill_output(const std::string& kernel_id,
                                           const std::string& execution_id,
                                           const std::string& stream, const std::string& text) {
  std::string uri =
      "openai4s://kernels/" + kernel_id + "/outputs/" + execution_id + "/" + stream + ".txt";
  {
    std::lock_guard lock(mutex_);
    if (entries_.count(uri)) return uri;  // the same cell's output, spilled once
  }
  std::error_code ec;
  std::string dir = data_dir_ + "/mcp-outputs/" + kernel_id;
  std::filesystem::create_directories(dir, ec);
  std::string path = dir + "/" + execution_id + "-" + stream + ".txt";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return "";
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    done += static_cast<std::size_t>(n);
  }
  add(uri, Entry{path, execution_id + "-" + stream + ".txt", "text/plain", kernel_id});
  return uri;
}

namespace {

// A filename as one URI path segment: everything but RFC 3986's
// unreserved characters as %XX ("a b#c" would otherwise cut the URI).
std::string percent_encoded(const std::string& text) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '~';
    if (plain) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4U];
      out += kHex[c & 15U];
    }
  }
  return out;
}

}  // namespace

std::string ResourceRegistry::add_artifact(const std::string& kernel_id,
                                           const std::string& version_id,
                                           const std::string& filename,
                                           const std::string& snapshot_path) {
  std::string uri = "openai4s://kernels/" + kernel_id + "/artifacts/" + version_id + "/" +
                    percent_encoded(filename);
  add(uri, Entry{snapshot_path, filename, mime_type_for(filename), kernel_id});
  return uri;
}

Json ResourceRegistry::list() {
  std::lock_guard lock(mutex_);
  Json out = Json::array();
  for (const auto& uri : order_) {
    const Entry& entry = entries_[uri];
    Json item{{"uri", uri}, {"name", entry.name}, {"mimeType", entry.mime_type}};
    struct stat st {};
    if (::stat(entry.path.c_str(), &st) == 0) item["size"] = st.st_size;
    out.push_back(std::move(item));
  }
  return out;
}

Result<Json> ResourceRegistry::read(const std::string& uri) {
  Entry entry;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(uri);
    if (it == entries_.end()) {
      return make_error(ErrorCode::kInvalidArgument, "no such resource: " + uri);
    }
    entry = it->second;
  }
  struct stat st {};
  if (::stat(entry.path.c_str(), &st) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "the resource's file is gone: " + uri);
  }
  if (st.st_size > kReadMaxBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the resource is " + std::to_string(st.st_size) +
                          " bytes, more than resources/read returns (16 MiB): " + uri);
  }
  auto bytes = read_file(entry.path);
  if (!bytes) return std::move(bytes).error();
  Json content{{"uri", uri}, {"mimeType", entry.mime_type}};
  if (is_text_type(entry.mime_type) && utf8::replace_invalid(bytes.value()) == bytes.value()) {
    content["text"] = bytes.value();
  } else {
    content["blob"] = base64_encode(bytes.value());
  }
  return Json{{"contents", Json::array({std::move(content)})}};
}

}  // namespace o4s::mcp
