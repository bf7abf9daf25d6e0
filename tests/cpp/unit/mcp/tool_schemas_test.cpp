// The tool table and the argument check every tools/call goes through.
#include "mcp/tool_schemas.h"

#include <gtest/gtest.h>

namespace o4s::mcp {
namespace {

TEST(ToolSchemas, TenToolsInTheirFixedOrderEachWithBothSchemas) {
  const char* names[] = {"create_kernel",  "list_kernels",   "execute",   "get_execution",
                         "interrupt",      "list_variables", "read_file", "write_file",
                         "restart_kernel", "shutdown_kernel"};
  const Json& tools = tool_definitions();
  ASSERT_EQ(tools.size(), std::size(names));
  for (std::size_t i = 0; i < tools.size(); ++i) {
    EXPECT_EQ(tools[i]["name"], names[i]);
    EXPECT_EQ(tools[i]["inputSchema"]["type"], "object");
    EXPECT_EQ(tools[i]["outputSchema"]["type"], "object");
    EXPECT_EQ(find_tool(names[i]), &tools[i]);
  }
  EXPECT_EQ(find_tool("explode"), nullptr);
}

TEST(ToolSchemas, AcceptsArgumentsThatFit) {
  const Json& schema = (*find_tool("execute"))["inputSchema"];
  EXPECT_EQ(check_arguments(schema, Json{{"kernel_id", "k"}, {"code", "1"}}), "");
  EXPECT_EQ(check_arguments(schema, Json{{"kernel_id", "k"},
                                         {"code", "1"},
                                         {"timeout_s", 2.5},
                                         {"max_output_chars", 500},
                                         {"wait", false}}),
            "");
}

TEST(ToolSchemas, SaysWhatToFix) {
  const Json& execute = (*find_tool("execute"))["inputSchema"];
  const std::pair<Json, const char*> cases[] = {
      {Json{{"kernel_id", "k"}}, "missing required argument 'code'"},
      {Json{{"kernel_id", "k"}, {"code", 1}}, "'code' must be a string"},
      {Json{{"kernel_id", "k"}, {"code", "1"}, {"bogus", true}}, "unknown argument 'bogus'"},
      {Json{{"kernel_id", "k"}, {"code", "1"}, {"max_output_chars", -5}}, "at least"},
      {Json{{"kernel_id", "k"}, {"code", "1"}, {"max_output_chars", 1.5}}, "integer"},
      {Json{{"kernel_id", "k"}, {"code", "1"}, {"wait", "yes"}}, "boolean"},
      {Json::array(), "object"},
  };
  for (const auto& [arguments, expected] : cases) {
    std::string why = check_arguments(execute, arguments);
    EXPECT_NE(why.find(expected), std::string::npos) << arguments.dump() << ": " << why;
  }
  const Json& create = (*find_tool("create_kernel"))["inputSchema"];
  EXPECT_NE(check_arguments(create, Json{{"language", "cobol"}}).find("must be one of"),
            std::string::npos);
}

}  // namespace
}  // namespace o4s::mcp
