// SandboxSettings from the environment (spec kernel.md §2.13): the three
// modes, strict parsing of every security setting, and the defaults.
#include <gtest/gtest.h>

#include "sandbox/sandbox_settings.h"

namespace o4s::sandbox {
namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

SandboxSettings parsed(const EnvironmentMap& env, std::uint64_t memory = 16 * kGiB) {
  auto settings = settings_from_environment(env, memory);
  EXPECT_TRUE(settings.ok()) << (settings.ok() ? "" : settings.error().message);
  return settings.ok() ? settings.value() : SandboxSettings{};
}

std::string refusal(const EnvironmentMap& env) {
  auto settings = settings_from_environment(env, 16 * kGiB);
  if (settings.ok()) return "<accepted>";
  EXPECT_EQ(settings.error().code, ErrorCode::kInvalidArgument);
  return settings.error().message;
}

TEST(SandboxModeTest, ParsesTheThreeWordsTrimmedAndCaseInsensitive) {
  EXPECT_EQ(parse_mode("").value(), SandboxMode::kAuto);
  EXPECT_EQ(parse_mode("auto").value(), SandboxMode::kAuto);
  EXPECT_EQ(parse_mode(" Enforce\n").value(), SandboxMode::kEnforce);
  EXPECT_EQ(parse_mode("OFF").value(), SandboxMode::kOff);
  EXPECT_EQ(mode_name(SandboxMode::kEnforce), "enforce");
}

TEST(SandboxModeTest, AnyOtherWordIsAnErrorNotADefault) {
  for (const char* word : {"enforced", "on", "1", "true", "none"}) {
    auto mode = parse_mode(word);
    ASSERT_FALSE(mode.ok()) << word;
    EXPECT_EQ(mode.error().message, std::string("OPENAI4S_KERNEL_SANDBOX must be auto, enforce or "
                                                "off (got '") +
                                        word + "')");
  }
}

TEST(SandboxSettingsTest, DefaultsAreGenerousAndBounded) {
  SandboxSettings settings = parsed({});
  EXPECT_EQ(settings.mode, SandboxMode::kAuto);
  EXPECT_FALSE(settings.allow_raw_network);
  EXPECT_EQ(settings.limits.address_space_bytes, 8 * kGiB);  // half of 16 GiB
  EXPECT_EQ(settings.limits.cpu_seconds, std::nullopt);
  EXPECT_EQ(settings.limits.processes, 1024U);
  EXPECT_EQ(settings.limits.file_size_bytes, 8 * kGiB);
  EXPECT_EQ(settings.tmpfs_bytes, kGiB);
  EXPECT_EQ(settings.bwrap, "bwrap");
  // A small machine still gets a usable memory limit.
  EXPECT_EQ(parsed({}, kGiB / 4).limits.address_space_bytes, kGiB);
}

TEST(SandboxSettingsTest, ReadsEveryVariable) {
  SandboxSettings settings = parsed({
      {"OPENAI4S_KERNEL_SANDBOX", "enforce"},
      {"OPENAI4S_KERNEL_ALLOW_RAW_NETWORK", "yes"},
      {"OPENAI4S_KERNEL_MEMORY_LIMIT", "2G"},
      {"OPENAI4S_KERNEL_CPU_LIMIT", "3600"},
      {"OPENAI4S_KERNEL_PROCESS_LIMIT", "none"},
      {"OPENAI4S_KERNEL_FILE_SIZE_LIMIT", "512m"},
      {"OPENAI4S_KERNEL_TMP_SIZE", "64M"},
      {"OPENAI4S_KERNEL_SANDBOX_READ_PATHS", "/data/a::/data/b"},
      {"OPENAI4S_KERNEL_BWRAP", "/opt/bwrap"},
  });
  EXPECT_EQ(settings.mode, SandboxMode::kEnforce);
  EXPECT_TRUE(settings.allow_raw_network);
  EXPECT_EQ(settings.limits.address_space_bytes, 2 * kGiB);
  EXPECT_EQ(settings.limits.cpu_seconds, 3600U);
  EXPECT_EQ(settings.limits.processes, std::nullopt);
  EXPECT_EQ(settings.limits.file_size_bytes, 512ULL << 20);
  EXPECT_EQ(settings.tmpfs_bytes, 64ULL << 20);
  EXPECT_EQ(settings.extra_read_paths, (std::vector<std::string>{"/data/a", "/data/b"}));
  EXPECT_EQ(settings.bwrap, "/opt/bwrap");
}

TEST(SandboxSettingsTest, MalformedValuesAreRefusedWithTheVariableNamed) {
  EXPECT_EQ(refusal({{"OPENAI4S_KERNEL_MEMORY_LIMIT", "lots"}}),
            "OPENAI4S_KERNEL_MEMORY_LIMIT must be a size such as 4G, 512M or none (got 'lots')");
  EXPECT_EQ(refusal({{"OPENAI4S_KERNEL_PROCESS_LIMIT", "2k"}}),
            "OPENAI4S_KERNEL_PROCESS_LIMIT must be a whole number or none (got '2k')");
  EXPECT_EQ(refusal({{"OPENAI4S_KERNEL_FILE_SIZE_LIMIT", "0"}}),
            "OPENAI4S_KERNEL_FILE_SIZE_LIMIT must be greater than zero (got '0')");
  EXPECT_EQ(refusal({{"OPENAI4S_KERNEL_ALLOW_RAW_NETWORK", "maybe"}}),
            "OPENAI4S_KERNEL_ALLOW_RAW_NETWORK must be 1/true/yes/on or 0/false/no/off (got "
            "'maybe')");
  EXPECT_EQ(refusal({{"OPENAI4S_KERNEL_SANDBOX_READ_PATHS", "data"}}),
            "OPENAI4S_KERNEL_SANDBOX_READ_PATHS must be absolute paths separated by ':' (got "
            "'data')");
  EXPECT_NE(refusal({{"OPENAI4S_KERNEL_TMP_SIZE", "none"}}), "<accepted>");
}

TEST(ParseSizeTest, BinaryMultiplesAndOverflow) {
  EXPECT_EQ(parse_size("4096").value(), 4096U);
  EXPECT_EQ(parse_size("1k").value(), 1024U);
  EXPECT_EQ(parse_size("1T").value(), 1ULL << 40);
  EXPECT_EQ(parse_size("unlimited").value(), std::nullopt);
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("-1").ok());
  EXPECT_FALSE(parse_size("1.5G").ok());
  EXPECT_FALSE(parse_size("99999999999999999T").ok());
}

}  // namespace
}  // namespace o4s::sandbox
