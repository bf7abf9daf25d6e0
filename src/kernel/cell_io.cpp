#include "kernel/cell_io.h"

#include "proto/frame_types.h"

namespace o4s::kernel {

namespace {

// A value's bytes plus kDisplayNodeOverheadBytes for each value in it: an
// entry costs a node here and an object in Python whatever its length
// (9,000 displays of 300 one-byte MIME entries, 41 MB by their bytes, once
// grew the host by 600 MiB). Recursion as deep as the parser's own.
std::size_t approximate_size(const Json& value) {
  std::size_t size = kDisplayNodeOverheadBytes;
  if (value.is_string()) return size + value.get_ref<const std::string&>().size();
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) size += key.size() + approximate_size(item);
  } else if (value.is_array()) {
    for (const auto& item : value) size += approximate_size(item);
  }
  return size;
}

// What keeping a bundle costs against the budget: its data and metadata
// (a flood of big metadata is a flood too) and the fixed overhead.
std::size_t charged_size(const Json& bundle) {
  std::size_t size = kDisplayOverheadBytes;
  for (const char* key : {"data", "metadata"}) {
    auto part = bundle.find(key);
    if (part != bundle.end() && part->is_object()) size += approximate_size(*part);
  }
  return size;
}

Json dropped_marker(std::size_t dropped) {
  std::string text = "[openai4s: " + std::to_string(dropped) +
                     " more displays dropped: a response keeps at most " +
                     std::to_string(kMaxCollectedDisplays) + " displays and " +
                     std::to_string(kMaxCollectedDisplayBytes) + " bytes of them]";
  return Json{{"data", {{"text/plain", std::move(text)}}},
              {"metadata", {{"openai4s", {{"dropped_displays", dropped}}}}},
              {"display_id", nullptr},
              {"update", false}};
}

}  // namespace

std::optional<Json> display_bundle(const Json& frame) {
  std::string_view type = proto::frame_type(frame);
  if (type == proto::frame::kClearOutput) {
    auto wait = frame.find("wait");
    return Json{{"type", proto::frame::kClearOutput},
                {"wait", wait != frame.end() && wait->is_boolean() && wait->get<bool>()}};
  }
  auto data = frame.find("data");
  if (data == frame.end() || !data->is_object()) return std::nullopt;
  Json bundle{
      {"data", *data}, {"metadata", Json::object()}, {"display_id", nullptr}, {"update", false}};
  if (auto metadata = frame.find("metadata"); metadata != frame.end() && metadata->is_object()) {
    bundle["metadata"] = *metadata;
  }
  if (auto id = frame.find("display_id"); id != frame.end() && id->is_string()) {
    bundle["display_id"] = *id;
  }
  if (auto update = frame.find("update"); update != frame.end() && update->is_boolean()) {
    bundle["update"] = *update;
  }
  // Only present when true: an ordinary display's bundle keeps its key set.
  if (auto result = frame.find("execute_result");
      result != frame.end() && result->is_boolean() && result->get<bool>()) {
    bundle["execute_result"] = true;
  }
  return bundle;
}

void DisplayCollector::keep(Json bundle) {
  const std::size_t size = charged_size(bundle);
  // Once one is dropped the rest are too, so the kept ones stay a prefix
  // of what the cell displayed (an update never outlives its display).
  if (dropped_ > 0 || kept_.size() >= kMaxCollectedDisplays ||
      bytes_ + size > kMaxCollectedDisplayBytes) {
    ++dropped_;
    return;
  }
  bytes_ += size;
  kept_.push_back(std::move(bundle));
}

Json DisplayCollector::take() {
  Json out = Json::array();
  for (auto& bundle : kept_) out.push_back(std::move(bundle));
  if (dropped_ > 0) out.push_back(dropped_marker(dropped_));
  kept_.clear();
  bytes_ = 0;
  dropped_ = 0;
  return out;
}

Json input_reply(const Json& request, InputSource* source, bool is_running_cell) {
  Json reply{{"type", proto::frame::kInputReply},
             {"id", request.contains("id") ? request["id"] : Json()}};
  if (auto seq = request.find("seq"); seq != request.end() && seq->is_number_integer()) {
    reply["seq"] = *seq;
  }
  if (!is_running_cell) {
    reply["error"] = "no input channel: the cell that asked has finished";
    return reply;
  }
  if (source == nullptr) {
    reply["error"] =
        "no input channel: pass on_input=... to execute() to answer input() (a callable "
        "taking (prompt, password) and returning the line)";
    return reply;
  }
  std::string prompt = proto::frame_string(request, "prompt");
  auto password = request.find("password");
  InputAnswer answer = source->ask(
      prompt, password != request.end() && password->is_boolean() && password->get<bool>());
  if (answer.interrupt) {
    reply["interrupt"] = true;
    reply["error"] = "interrupted at the input prompt";
  } else if (answer.value) {
    reply["value"] = std::move(*answer.value);
  } else {
    reply["error"] = answer.error.empty() ? std::string("no input given") : answer.error;
  }
  return reply;
}

}  // namespace o4s::kernel
