#include "tools/catalog.h"

#include <gtest/gtest.h>

namespace corral::tools {
namespace {

TEST(Catalog, EveryToolHasASchemaThatForbidsUnknownKeys) {
  for (const char* name : {"read", "write", "edit", "ls", "find", "grep", "bash", "sandbox_info"}) {
    const ToolSpec* spec = FindTool(name);
    ASSERT_NE(spec, nullptr) << name;
    nlohmann::json schema = InputSchema(*spec);
    EXPECT_EQ(schema["type"], "object");
    EXPECT_EQ(schema["additionalProperties"], false);
    EXPECT_TRUE(schema["properties"].contains("sandbox_permissions")) << name;
  }
  EXPECT_EQ(FindTool("rm"), nullptr);
}

TEST(Catalog, ArgumentsAreCheckedStrictly) {
  const ToolSpec& read = *FindTool("read");
  EXPECT_TRUE(ValidateArguments(read, {{"path", "a"}, {"offset", 2}, {"limit", 10}}).ok());
  EXPECT_FALSE(ValidateArguments(read, nlohmann::json::object()).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", 3}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", ""}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", "a"}, {"offset", 0}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", "a"}, {"offset", -1}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", "a"}, {"limit", 1.5}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", "a"}, {"bogus", 1}}).ok());
  EXPECT_FALSE(ValidateArguments(read, {{"path", std::string("a\0b", 3)}}).ok());
  EXPECT_FALSE(ValidateArguments(read, nlohmann::json::array()).ok());
  const ToolSpec& edit = *FindTool("edit");
  EXPECT_FALSE(ValidateArguments(edit, {{"path", "a"}, {"old_string", "x"}, {"new_string", "y"}, {"replace_all", 1}})
                   .ok());
  const ToolSpec& bash = *FindTool("bash");
  EXPECT_FALSE(ValidateArguments(bash, {{"command", "true"}, {"timeout", 100000}}).ok());
  EXPECT_TRUE(ValidateArguments(bash, {{"command", "true"}, {"sandbox_permissions", "workspace-write"},
                                       {"justification", "build"}})
                  .ok());
}

}  // namespace
}  // namespace corral::tools
