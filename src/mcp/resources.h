// The resources a kernel's results link to, under
// openai4s://kernels/{kernel_id}/...: the whole output of a cell whose
// result was cut (spilled to a file in the data directory) and the
// artifacts a cell saved (the store's snapshots). Only URIs this server
// handed out can be read: a URI is a key, never a path to resolve.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"

namespace o4s::mcp {

using Json = nlohmann::json;

class ResourceRegistry {
 public:
  explicit ResourceRegistry(std::string data_dir);

  // Writes `text` to a file and returns its URI ("" if it could not).
  std::string spill_output(const std::string& kernel_id, const std::string& execution_id,
                           const std::string& stream, const std::string& text);
  // A saved artifact's snapshot; returns its URI.
  std::string add_artifact(const std::string& kernel_id, const std::string& version_id,
                           const std::string& filename, const std::string& snapshot_path);
  Json list();
  // {contents: [{uri, mimeType, text | blob}]}; an unknown URI is an error.
  Result<Json> read(const std::string& uri);

 private:
  struct Entry {
    std::string path;
    std::string name;
    std::string mime_type;
    std::string kernel_id;
  };
  void add(const std::string& uri, Entry entry);

  const std::string data_dir_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;  // oldest first, bounded
};

// A MIME type from a file name's extension (text/plain when unsure).
std::string mime_type_for(const std::string& filename);

}  // namespace o4s::mcp
