// The settings registry: every entry parses its default, rejects bad values with an error naming
// it, and overrides restore what was there.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "vkml/config.h"
#include "vkml/errors.h"

namespace vkml::testing {
namespace {

// Values each kind must reject; Int and Bytes also reject one past their range.
std::vector<std::string> bad_values(const ConfigEntry& e) {
  if (e.kind == "Bool") return {"2", "yes", "true", "-1"};
  if (e.kind == "Int" || e.kind == "Bytes") return {"abc", "1.5", "-2", "99999999999999999999999"};
  if (e.kind == "Enum") return {"bogus", e.default_text + "x"};
  if (e.kind == "List") return {"a", "1,,2", "-1"};
  if (e.kind == "Tile") return {"1x", "x", "0x0x0x0x0", "1x2x3x4x5x6x7x8"};
  if (e.kind == "Set") return {"bogus", "forward,bogus"};
  return {};  // Text takes anything
}

Config parse_with(const std::string& name, const std::string& value) {
  const std::map<std::string, std::string> env = {{name, value}};
  return parse_config([&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Config, EveryDefaultParses) {
  for (const ConfigEntry& e : config_entries()) {
    SCOPED_TRACE(e.name);
    EXPECT_NO_THROW(parse_with(e.name, e.default_text.empty() ? "" : e.default_text));
    EXPECT_FALSE(e.help.empty());
  }
}

TEST(Config, EveryEntryRejectsBadValuesByName) {
  size_t checked = 0;
  for (const ConfigEntry& e : config_entries()) {
    for (const std::string& bad : bad_values(e)) {
      SCOPED_TRACE(e.name + "=" + bad);
      try {
        parse_with(e.name, bad);
        ADD_FAILURE() << "accepted";
      } catch (const InvalidArgument& err) {
        const std::string what = err.what();
        EXPECT_NE(what.find(e.name), std::string::npos) << what;
        EXPECT_NE(what.find("expected"), std::string::npos) << what;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, config_entries().size());
}

TEST(Config, TypedValues) {
  EXPECT_EQ(parse_with("VKML_MEMORY_LIMIT", "4G").memory_limit, int64_t{4} << 30);
  EXPECT_EQ(parse_with("VKML_MEMORY_LIMIT", "512k").memory_limit, 512 * 1024);
  EXPECT_EQ(parse_with("VKML_DEVICE_ORDER", "1,0,1").device_order, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(parse_with("VKML_PIPELINE_THREADS", "auto").pipeline_threads, kConfigAuto);
  EXPECT_EQ(parse_with("VKML_PIPELINE_THREADS", "3").pipeline_threads, 3);
  EXPECT_THROW(parse_with("VKML_PIPELINE_THREADS", "65"), InvalidArgument);
  EXPECT_TRUE(parse_with("VKML_HOST_SPILL", "1").host_spill);
  EXPECT_EQ(parse_with("VKML_CONV_WINOGRAD", "forward,weight").conv_winograd, "forward,weight");
  EXPECT_EQ(parse_with("VKML_CONV_COOP_TILE", "64x64x4x2x2").conv_coop_tile,
            (std::vector<uint32_t>{64, 64, 4, 2, 2}));
  EXPECT_EQ(parse_with("VKML_CACHE_DIR", "/tmp/x").cache_dir, "/tmp/x");
}

TEST(Config, OverrideRestoresValueAndSource) {
  const ConfigEntry before = config_entry("VKML_EW_SPREAD");
  {
    ConfigOverride o("VKML_EW_SPREAD", "7");
    EXPECT_EQ(config().ew_spread, 7);
    EXPECT_EQ(config_entry("VKML_EW_SPREAD").source, ConfigSource::kOverride);
    EXPECT_THROW(set_config("VKML_EW_SPREAD", "seven"), InvalidArgument);
    EXPECT_EQ(config().ew_spread, 7);  // a rejected value leaves the setting alone
  }
  EXPECT_EQ(config_entry("VKML_EW_SPREAD").value, before.value);
  EXPECT_EQ(config_entry("VKML_EW_SPREAD").source, before.source);
  EXPECT_THROW(set_config("VKML_NO_SUCH_SETTING", "1"), InvalidArgument);
}

TEST(Config, DocumentListsEveryPublicAndTuningEntry) {
  const std::string doc = config_markdown();
  for (const ConfigEntry& e : config_entries()) {
    if (e.tier != ConfigTier::kDiagnostic) {
      EXPECT_NE(doc.find("`" + e.name + "`"), std::string::npos) << e.name;
    }
  }
}

}  // namespace
}  // namespace vkml::testing
