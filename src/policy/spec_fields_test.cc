#include "policy/spec_fields.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/spec.h"
#include "policy/spec_json.h"
#include "testing/source_dir.h"

namespace corral {
namespace {

std::vector<std::string> DocLines() {
  std::ifstream in(testing::SourceDir() / "docs" / "config.md");
  EXPECT_TRUE(in.good()) << "docs/config.md not found under " << testing::SourceDir();
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// docs/config.md's [sandbox] table says what spec_fields.h says, row for row:
// a setting changed there without its row here (or the reverse) fails.
TEST(SpecFields, DocsConfigTableRowsAreTheTablesRendering) {
  const std::vector<std::string> lines = DocLines();
  ASSERT_FALSE(lines.empty());
  const std::set<std::string> present(lines.begin(), lines.end());
#define CORRAL_EXPECT_ROW(member, Setter, setting)                                                        \
  EXPECT_TRUE(present.count(RenderDocRow(setting)) == 1)                                                  \
      << "docs/config.md has no row\n" << RenderDocRow(setting) << "\nfor " #member " (spec_fields.h); " \
      << "write that line into the [sandbox] table";
  CORRAL_SANDBOX_SETTINGS(CORRAL_EXPECT_ROW)
#undef CORRAL_EXPECT_ROW
  // And no second, stale row for the same key.
#define CORRAL_EXPECT_ONE_ROW(member, Setter, setting)                                 \
  {                                                                                    \
    const std::string start = "| `" + std::string(setting.key) + "` | ";              \
    int rows = 0;                                                                      \
    for (const std::string& line : lines) rows += line.starts_with(start) && line.find(std::string(setting.flag)) != std::string::npos; \
    EXPECT_EQ(rows, 1) << #member;                                                     \
  }
  CORRAL_SANDBOX_SETTINGS(CORRAL_EXPECT_ONE_ROW)
#undef CORRAL_EXPECT_ONE_ROW
}

// Its project-narrowing table too: what the project file may do is what
// config_merge.cc enforces from `project`.
TEST(SpecFields, DocsProjectNarrowingRowsAreTheTablesRendering) {
  const std::vector<std::string> lines = DocLines();
  const std::set<std::string> present(lines.begin(), lines.end());
#define CORRAL_EXPECT_NARROWING_ROW(member, Setter, setting)                                              \
  EXPECT_TRUE(present.count(RenderNarrowingRow(setting)) == 1)                                            \
      << "docs/config.md has no row\n" << RenderNarrowingRow(setting) << "\nfor " #member " (spec_fields.h); " \
      << "write that line into the Project narrowing table";
  CORRAL_SANDBOX_SETTINGS(CORRAL_EXPECT_NARROWING_ROW)
#undef CORRAL_EXPECT_NARROWING_ROW
}

// The list settings' rows of the [sandbox] table, one each.
TEST(SpecFields, DocsConfigTableListRowsAreTheTablesRendering) {
  const std::vector<std::string> lines = DocLines();
  ASSERT_FALSE(lines.empty());
  const std::set<std::string> present(lines.begin(), lines.end());
#define CORRAL_EXPECT_LIST_ROW(member, Adder, setting)                                                     \
  {                                                                                                        \
    EXPECT_TRUE(present.count(RenderDocRow(setting)) == 1)                                                 \
        << "docs/config.md has no row\n" << RenderDocRow(setting) << "\nfor " #member " (spec_fields.h); " \
        << "write that line into the [sandbox] table";                                                    \
    const std::string columns = "| `" #member "` | `" + std::string(setting.flag) + "` |";                 \
    int rows = 0;                                                                                          \
    for (const std::string& line : lines) rows += line.find(columns) != std::string::npos;               \
    EXPECT_EQ(rows, 1) << #member;                                                                         \
  }
  CORRAL_SANDBOX_LISTS(CORRAL_EXPECT_LIST_ROW)
#undef CORRAL_EXPECT_LIST_ROW
}

// And their rows of the project-narrowing table: one per rule, naming the
// lists it governs, and no other row for any of those keys.
TEST(SpecFields, DocsProjectNarrowingListRowsAreTheTablesRendering) {
  const std::vector<std::string> lines = DocLines();
  const std::set<std::string> present(lines.begin(), lines.end());
#define CORRAL_LIST_POINTER(member, Adder, setting) &setting,
  const ListSetting* const settings[] = {CORRAL_SANDBOX_LISTS(CORRAL_LIST_POINTER)};
#undef CORRAL_LIST_POINTER
  const std::vector<std::string> rows = RenderNarrowingRows(settings);
  EXPECT_EQ(rows.size(), 4u);
  for (const std::string& row : rows) {
    EXPECT_TRUE(present.count(row) == 1) << "docs/config.md has no row\n" << row
                                         << "\n(spec_fields.h); write that line into the Project narrowing table";
  }
  // In the narrowing table, each key in exactly one row's first column.
  std::vector<std::string> first_columns;
  bool in_table = false;
  for (const std::string& line : lines) {
    if (line.starts_with("## ")) in_table = line == "## Project narrowing";
    if (in_table && line.starts_with("| `")) first_columns.push_back(line.substr(0, line.find(" | ", 2)));
  }
  ASSERT_FALSE(first_columns.empty()) << "no Project narrowing table in docs/config.md";
  for (const ListSetting* setting : settings) {
    const std::string key = "`" + std::string(setting->key) + "`";
    int found = 0;
    for (const std::string& column : first_columns) found += column.find(key) != std::string::npos;
    EXPECT_EQ(found, setting->project == ProjectListRule::kNotAConfigKey ? 0 : 1) << setting->key;
  }
}

TEST(SpecFields, KeysAreTheMemberNames) {
#define CORRAL_EXPECT_KEY(member, Setter, setting) EXPECT_EQ(setting.key, #member);
  CORRAL_SANDBOX_SETTINGS(CORRAL_EXPECT_KEY)
  CORRAL_SANDBOX_LISTS(CORRAL_EXPECT_KEY)
#undef CORRAL_EXPECT_KEY
}

// A switch's setter takes its enum: the second value turns it on.
TEST(SpecFields, SwitchSetterTakesItsEnum) {
  EXPECT_TRUE(SettingFromArg(kBestEffortSetting, Enforcement::kBestEffort));
  EXPECT_FALSE(SettingFromArg(kBestEffortSetting, Enforcement::kRequired));
}

TEST(SpecFields, ChoiceNamesAndDefaults) {
  EXPECT_EQ(NetworkModeName(NetworkMode::kNone), "none");
  EXPECT_EQ(NetworkModeName(NetworkMode::kAll), "all");
  EXPECT_EQ(HomeModeName(HomeMode::kIsolated), "isolated");
  EXPECT_EQ(HomeModeName(HomeMode::kReal), "real");
  EXPECT_EQ(ParseChoice(kNetworkSetting, "all"), NetworkMode::kAll);
  EXPECT_EQ(ParseChoice(kHomeSetting, "shared"), std::nullopt);
  const PolicySpec spec;
  EXPECT_FALSE(spec.best_effort);
  EXPECT_EQ(spec.home, HomeMode::kIsolated);
  EXPECT_EQ(spec.network, NetworkMode::kNone);
  EXPECT_EQ(spec.timeout, std::nullopt);
  EXPECT_EQ(spec.tmpfs_size, kDefaultTmpfsSize);
}

// Each setting reaches the JSON under its key and comes back unchanged.
TEST(SpecFields, JsonRoundTripsEverySetting) {
  PolicySpec spec;
  spec.best_effort = true;
  spec.home = HomeMode::kReal;
  spec.network = NetworkMode::kAll;
  spec.timeout = std::chrono::seconds(42);
  spec.tmpfs_size = 512 * kMiB;
  spec.max_procs = 64;
  spec.max_memory = 256 * kMiB;
  spec.max_cpu_seconds = std::chrono::seconds(9);
  spec.max_file_size = 4096;
  spec.max_open_files = 100;
  spec.max_cpus = 1250;
  spec.user_config_grants = {"/user"};
  spec.project_config_grants = {"/project"};
#define CORRAL_FILL_LIST(member, Adder, setting) spec.member = {"/" #member, "/" #member "/2"};
  CORRAL_SANDBOX_LISTS(CORRAL_FILL_LIST)
#undef CORRAL_FILL_LIST
  const nlohmann::json json = SpecToJson(spec);
#define CORRAL_EXPECT_JSON_KEY(member, Setter, setting) EXPECT_TRUE(json.contains(std::string(setting.key))) << #member;
  CORRAL_SANDBOX_SETTINGS(CORRAL_EXPECT_JSON_KEY)
  CORRAL_SANDBOX_LISTS(CORRAL_EXPECT_JSON_KEY)
#undef CORRAL_EXPECT_JSON_KEY
  Result<PolicySpec> back = SpecFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, spec);
}

// A limit in JSON: null is no limit; a number outside the range, or not a
// whole number, is refused naming the key.
TEST(SpecFields, JsonLimitsAreChecked) {
  Result<PolicySpec> unset = SpecFromJson(nlohmann::json{{"max_procs", nullptr}});
  ASSERT_TRUE(unset.ok()) << unset.error().message();
  EXPECT_FALSE(unset->max_procs.has_value());
  for (const nlohmann::json& bad : {nlohmann::json{{"max_procs", 0}}, nlohmann::json{{"max_procs", -1}},
                                    nlohmann::json{{"max_open_files", 3}}, nlohmann::json{{"max_memory", "1g"}},
                                    nlohmann::json{{"max_file_size", 1.5}}, nlohmann::json{{"max_cpus", 0}},
                                    nlohmann::json{{"max_cpus", 0.0005}}, nlohmann::json{{"max_cpus", 2000}},
                                    nlohmann::json{{"max_cpus", "1"}}}) {
    Result<PolicySpec> refused = SpecFromJson(bad);
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_NE(refused.error().message().find(bad.begin().key()), std::string::npos) << refused.error().message();
  }
}

// CPUs are a number of CPUs in JSON (0.5, 2), held as thousandths.
TEST(SpecFields, JsonCpusAreANumberOfCpus) {
  PolicySpec spec;
  spec.max_cpus = 500;
  EXPECT_EQ(SpecToJson(spec)["max_cpus"], 0.5);
  spec.max_cpus = 2000;
  EXPECT_EQ(SpecToJson(spec)["max_cpus"], 2);
  Result<PolicySpec> read = SpecFromJson(nlohmann::json{{"max_cpus", 0.25}});
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->max_cpus, std::optional<uint64_t>(250));
}

// The flag's spelling: whole CPUs and up to three decimals.
TEST(SpecFields, CpusAreParsedAndWritten) {
  EXPECT_EQ(*ParseLimit(kMaxCpusSetting, "0.5"), 500u);
  EXPECT_EQ(*ParseLimit(kMaxCpusSetting, "2"), 2000u);
  EXPECT_EQ(*ParseLimit(kMaxCpusSetting, "0.01"), 10u);
  EXPECT_EQ(*ParseLimit(kMaxCpusSetting, "1024"), 1024000u);
  for (const char* bad : {"", ".5", "1.", "0.0001", "0", "0.009", "1025", "-1", "1e3", "half", "1.2.3"}) {
    EXPECT_FALSE(ParseLimit(kMaxCpusSetting, bad).ok()) << bad;
  }
  EXPECT_EQ(LimitText(kMaxCpusSetting, 1250), "1.25");
  EXPECT_EQ(LimitText(kMaxCpusSetting, 10), "0.01");
  EXPECT_EQ(LimitText(kMaxCpusSetting, 3000), "3");
}

}  // namespace
}  // namespace corral
