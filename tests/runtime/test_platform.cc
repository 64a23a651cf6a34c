// platform.h: the Vulkan loader, the default cache folder and the process id, on the platform the
// suite was built for (Linux natively, Windows through the MinGW-w64 cross-build under Wine).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "runtime/platform.h"
#include "vkml/config.h"

namespace vkml::testing {
namespace {

std::string cache_dir_with(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* n) -> const char* {
           auto it = env.find(n);
           return it == env.end() ? nullptr : it->second.c_str();
         })
      .cache_dir;
}

TEST(Platform, OpensTheVulkanLoader) {
  std::string why;
  EXPECT_NE(platform::open_vulkan_loader(&why), nullptr) << why;
  EXPECT_TRUE(why.empty()) << why;
}

TEST(Platform, ProcessIdIsStable) {
  EXPECT_NE(platform::process_id(), 0u);
  EXPECT_EQ(platform::process_id(), platform::process_id());
}

#ifdef _WIN32
TEST(Platform, CacheGoesUnderLocalAppData) {
  EXPECT_EQ(cache_dir_with({{"LOCALAPPDATA", "C:\\Users\\u\\AppData\\Local"}}),
            "C:\\Users\\u\\AppData\\Local\\vkml");
  // POSIX variables mean nothing here.
  EXPECT_EQ(cache_dir_with({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}), "");
}
#else
TEST(Platform, CacheFollowsXdgThenHome) {
  EXPECT_EQ(cache_dir_with({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}), "/x/vkml");
  EXPECT_EQ(cache_dir_with({{"HOME", "/h"}}), "/h/.cache/vkml");
  EXPECT_EQ(cache_dir_with({{"LOCALAPPDATA", "C:\\Users\\u"}}), "");
}
#endif

TEST(Platform, CacheDirSettingWinsOverTheDefault) {
  EXPECT_EQ(cache_dir_with({{"VKML_CACHE_DIR", "elsewhere"}, {"LOCALAPPDATA", "C:\\L"},
                            {"XDG_CACHE_HOME", "/x"}}),
            "elsewhere");
}

}  // namespace
}  // namespace vkml::testing
