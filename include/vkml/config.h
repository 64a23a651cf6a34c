// vkml's settings: one typed struct built from config.def, parsed from the environment once (the
// first call of config(), which the first device creation makes). Library code reads
// vkml::config() and never the environment; tests change values through ConfigOverride.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vkml {

// The value an Int or Bytes setting holds when it is "auto" (the code's own rule decides).
constexpr int64_t kConfigAuto = -1;

namespace config_types {
using Bool = bool;
using Int = int64_t;
using Bytes = int64_t;
using Enum = std::string;
using Text = std::string;
using List = std::vector<int64_t>;
using Tile = std::vector<uint32_t>;
using Set = std::string;
}  // namespace config_types

struct Config {
#define VKML_SETTING(kind, field, name, def, allowed, tier, help) config_types::kind field{};
#include "vkml/config.def"
#undef VKML_SETTING
};

// The settings; the first call parses the environment and throws InvalidArgument for a bad value.
const Config& config();

enum class ConfigTier : uint8_t { kPublic, kTuning, kDiagnostic };
enum class ConfigSource : uint8_t { kDefault, kEnvironment, kOverride };

// One setting as the registry describes it, with its current text and where that came from.
struct ConfigEntry {
  std::string name, kind, default_text, allowed, help, value;
  ConfigTier tier = ConfigTier::kTuning;
  ConfigSource source = ConfigSource::kDefault;
};

std::vector<ConfigEntry> config_entries();
std::string_view config_tier_name(ConfigTier t);
std::string_view config_source_name(ConfigSource s);

// Parses `text` as setting `name` and makes it the current value (source kOverride); an empty
// text restores the default. Throws InvalidArgument naming the setting and the allowed values for
// an unknown name or a bad value, leaving the setting unchanged.
void set_config(const std::string& name, const std::string& text);

// Parses an environment as config() does, from `lookup` (name -> value or nullptr), without
// touching the process's settings; throws InvalidArgument as config() would.
Config parse_config(const std::function<const char*(const char*)>& lookup);

// The current text and source of a setting, for saving and restoring around an override.
ConfigEntry config_entry(const std::string& name);
void restore_config(const ConfigEntry& saved);

// Sets a setting for one scope and restores the previous value and source on exit (tests). Like
// set_config, it is meant for tests and set-up: readers on other threads are not synchronised.
class ConfigOverride {
 public:
  ConfigOverride(const std::string& name, const std::string& text);
  ~ConfigOverride();
  ConfigOverride(const ConfigOverride&) = delete;
  ConfigOverride& operator=(const ConfigOverride&) = delete;

 private:
  ConfigEntry saved_;
};

// The settings as a Markdown page (docs/configuration.md) or a plain table (vkml-info --config).
std::string config_markdown();
std::string config_table();

}  // namespace vkml
