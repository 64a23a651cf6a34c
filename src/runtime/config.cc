// The settings registry: parses config.def's entries from the environment (the only place vkml
// reads it), validates every value, and serves overrides and listings.
#include "vkml/config.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "platform.h"
#include "vkml/errors.h"

namespace vkml {
namespace {

enum class Kind : uint8_t { Bool, Int, Bytes, Enum, Text, List, Tile, Set };

struct Spec {
  const char* name;
  Kind kind;
  const char* kind_name;
  const char* default_text;
  const char* allowed;
  ConfigTier tier;
  const char* help;
};

#define Public ConfigTier::kPublic
#define Tuning ConfigTier::kTuning
#define Diagnostic ConfigTier::kDiagnostic

const Spec kSpecs[] = {
#define VKML_SETTING(kind, field, name, def, allowed, tier, help) \
  {name, Kind::kind, #kind, def, allowed, tier, help},
#include "vkml/config.def"
#undef VKML_SETTING
};

#undef Public
#undef Tuning
#undef Diagnostic

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string describe_allowed(const Spec& s) {
  const std::string allowed = s.allowed;
  switch (s.kind) {
    case Kind::Bool: return "0 or 1";
    case Kind::Int:
    case Kind::Bytes: {
      const auto range = split(allowed, '.');  // "min..max" -> {min, "", max}
      std::string text = "an integer from " + range.front() + " to " + range.back();
      if (s.kind == Kind::Bytes) text += ", optionally with a K, M or G suffix";
      if (std::string(s.default_text) == "auto") text += ", or auto";
      return text;
    }
    case Kind::Enum: {
      std::string text = "one of ";
      const auto words = split(allowed, '|');
      for (size_t i = 0; i < words.size(); ++i) text += (i ? ", " : "") + words[i];
      return text;
    }
    case Kind::Text: return "any text";
    case Kind::List: return "comma-separated non-negative integers";
    case Kind::Tile: {
      const auto range = split(allowed, '.');
      return "empty, or " + range.front() + (range.front() == range.back() ? "" : " to " + range.back()) +
             " positive integers joined by 'x'";
    }
    case Kind::Set: {
      const auto parts = split(allowed, ';');
      std::string text = "one of ";
      const auto words = split(parts[0], '|');
      for (size_t i = 0; i < words.size(); ++i) text += words[i] + ", ";
      return text + "or a comma-separated list of " + parts[1];
    }
  }
  return "";
}

[[noreturn]] void bad_value(const Spec& s, const std::string& text) {
  throw InvalidArgument("vkml: " + std::string(s.name) + "='" + text + "' is not valid: expected " +
                        describe_allowed(s) + " (" + s.help + ")");
}

// A whole decimal integer, or false.
bool parse_integer(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

int64_t parse_number(const Spec& s, const std::string& text) {
  if (text == "auto" && std::string(s.default_text) == "auto") return kConfigAuto;
  std::string digits = text;
  int64_t scale = 1;
  if (s.kind == Kind::Bytes && !digits.empty()) {
    switch (digits.back()) {
      case 'k': case 'K': scale = int64_t{1} << 10; break;
      case 'm': case 'M': scale = int64_t{1} << 20; break;
      case 'g': case 'G': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  int64_t v = 0, lo = 0, hi = 0;
  const auto range = split(s.allowed, '.');
  parse_integer(range.front(), &lo);
  parse_integer(range.back(), &hi);
  if (!parse_integer(digits, &v) || v < 0 || v > hi / scale) bad_value(s, text);
  v *= scale;
  if (v < lo || v > hi) bad_value(s, text);
  return v;
}

bool parse_bool(const Spec& s, const std::string& text) {
  if (text == "0" || text == "1") return text == "1";
  bad_value(s, text);
}

std::string parse_enum(const Spec& s, const std::string& text) {
  for (const std::string& w : split(s.allowed, '|')) {
    if (w == text) return text;
  }
  bad_value(s, text);
}

std::vector<int64_t> parse_list(const Spec& s, const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  for (const std::string& item : split(text, ',')) {
    int64_t v = 0;
    if (!parse_integer(item, &v) || v < 0) bad_value(s, text);
    out.push_back(v);
  }
  return out;
}

std::vector<uint32_t> parse_tile(const Spec& s, const std::string& text) {
  std::vector<uint32_t> out;
  if (text.empty()) return out;
  int64_t lo = 0, hi = 0;
  const auto range = split(s.allowed, '.');
  parse_integer(range.front(), &lo);
  parse_integer(range.back(), &hi);
  for (const std::string& item : split(text, 'x')) {
    int64_t v = 0;
    if (!parse_integer(item, &v) || v <= 0 || v > 65536) bad_value(s, text);
    out.push_back(static_cast<uint32_t>(v));
  }
  if (static_cast<int64_t>(out.size()) < lo || static_cast<int64_t>(out.size()) > hi) {
    bad_value(s, text);
  }
  return out;
}

std::string parse_set(const Spec& s, const std::string& text) {
  const auto parts = split(s.allowed, ';');
  for (const std::string& w : split(parts[0], '|')) {
    if (w == text) return text;
  }
  const auto items = split(parts[1], ',');
  for (const std::string& item : split(text, ',')) {
    bool known = false;
    for (const std::string& w : items) known |= w == item;
    if (!known) bad_value(s, text);
  }
  return text;
}

template <typename T>
void assign(const Spec& s, const std::string& text, T* field);
template <>
void assign(const Spec& s, const std::string& text, bool* f) { *f = parse_bool(s, text); }
template <>
void assign(const Spec& s, const std::string& text, int64_t* f) { *f = parse_number(s, text); }
template <>
void assign(const Spec& s, const std::string& text, std::string* f) {
  *f = s.kind == Kind::Enum ? parse_enum(s, text) : s.kind == Kind::Set ? parse_set(s, text) : text;
}
template <>
void assign(const Spec& s, const std::string& text, std::vector<int64_t>* f) {
  *f = parse_list(s, text);
}
template <>
void assign(const Spec& s, const std::string& text, std::vector<uint32_t>* f) {
  *f = parse_tile(s, text);
}

// Parses `text` into the field of setting `index` of `cfg`.
void assign_index(Config& cfg, size_t index, const std::string& text) {
  size_t i = 0;
#define VKML_SETTING(kind, field, name, def, allowed, tier, help) \
  if (i++ == index) return assign(kSpecs[index], text, &cfg.field);
#include "vkml/config.def"
#undef VKML_SETTING
}

constexpr size_t kCount = sizeof(kSpecs) / sizeof(kSpecs[0]);

size_t index_of(const std::string& name) {
  for (size_t i = 0; i < kCount; ++i) {
    if (name == kSpecs[i].name) return i;
  }
  throw InvalidArgument("vkml: unknown setting '" + name + "' (`vkml-info --config` lists them)");
}

// Where the pipeline cache goes when VKML_CACHE_DIR is unset.
std::string default_cache_dir(const std::function<const char*(const char*)>& lookup) {
  return platform::default_cache_dir(lookup);
}

struct State {
  Config values;
  std::string texts[kCount];
  ConfigSource sources[kCount] = {};
};

State parse_state(const std::function<const char*(const char*)>& lookup) {
  State st;
  for (size_t i = 0; i < kCount; ++i) {
    const char* env = lookup(kSpecs[i].name);
    const bool from_env = env && *env;
    st.texts[i] = from_env ? env : kSpecs[i].default_text;
    st.sources[i] = from_env ? ConfigSource::kEnvironment : ConfigSource::kDefault;
    assign_index(st.values, i, st.texts[i]);
  }
  if (st.values.cache_dir.empty()) st.values.cache_dir = default_cache_dir(lookup);
  return st;
}

const char* process_env(const char* name) { return std::getenv(name); }

std::mutex g_mu;

State& state() {
  static State st = parse_state(process_env);
  return st;
}

}  // namespace

const Config& config() { return state().values; }

Config parse_config(const std::function<const char*(const char*)>& lookup) {
  return parse_state(lookup).values;
}

std::string_view config_tier_name(ConfigTier t) {
  switch (t) {
    case ConfigTier::kPublic: return "public";
    case ConfigTier::kTuning: return "tuning";
    default: return "diagnostic";
  }
}

std::string_view config_source_name(ConfigSource s) {
  switch (s) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kEnvironment: return "environment";
    default: return "override";
  }
}

ConfigEntry config_entry(const std::string& name) {
  const size_t i = index_of(name);
  std::lock_guard<std::mutex> lock(g_mu);
  State& st = state();
  const Spec& s = kSpecs[i];
  // An unset cache folder shows where the cache actually goes.
  const bool resolved = std::string(s.name) == "VKML_CACHE_DIR" && st.texts[i].empty();
  return {s.name, s.kind_name, s.default_text, describe_allowed(s), s.help,
          resolved ? st.values.cache_dir : st.texts[i], s.tier, st.sources[i]};
}

std::vector<ConfigEntry> config_entries() {
  std::vector<ConfigEntry> out;
  for (const Spec& s : kSpecs) out.push_back(config_entry(s.name));
  return out;
}

void set_config(const std::string& name, const std::string& text) {
  const size_t i = index_of(name);
  std::lock_guard<std::mutex> lock(g_mu);
  State& st = state();
  const Spec& s = kSpecs[i];
  const std::string value = text.empty() ? s.default_text : text;
  assign_index(st.values, i, value);  // throws before anything changes
  st.texts[i] = value;
  st.sources[i] = text.empty() ? ConfigSource::kDefault : ConfigSource::kOverride;
  if (std::string(s.name) == "VKML_CACHE_DIR" && st.values.cache_dir.empty()) {
    st.values.cache_dir = default_cache_dir(process_env);
  }
}

void restore_config(const ConfigEntry& saved) {
  const size_t i = index_of(saved.name);
  std::lock_guard<std::mutex> lock(g_mu);
  State& st = state();
  assign_index(st.values, i, saved.value);
  st.texts[i] = saved.value;
  st.sources[i] = saved.source;
  if (saved.name == "VKML_CACHE_DIR" && st.values.cache_dir.empty()) {
    st.values.cache_dir = default_cache_dir(process_env);
  }
}

ConfigOverride::ConfigOverride(const std::string& name, const std::string& text)
    : saved_(config_entry(name)) {
  set_config(name, text);
}

ConfigOverride::~ConfigOverride() { restore_config(saved_); }

std::string config_table() {
  std::ostringstream os;
  for (const ConfigEntry& e : config_entries()) {
    os << e.name << "=" << e.value << "  (" << config_source_name(e.source) << ", "
       << config_tier_name(e.tier) << ")\n";
  }
  return os.str();
}

std::string config_markdown() {
  std::ostringstream os;
  os << "# Configuration\n\n"
     << "Generated from `include/vkml/config.def` by `build/vkml-info --config-doc` (`make docs`); "
        "`build/vkml-info --config` prints each setting's current value and where it came from.\n\n"
     << "vkml reads its `VKML_*` environment variables once, when the first device is created. A "
        "value that is not allowed is an error naming the variable and the values it takes. Tests "
        "and programs change settings with `torch_vkml.config.override(VKML_NAME=value)` (a "
        "context manager) or, in C++, `vkml::ConfigOverride`.\n\n"
     << "Public settings are stable and listed in the README. Tuning settings choose kernels and "
        "limits; they may change between versions. Diagnostic settings change results and exist "
        "only in builds configured with `-DVKML_DIAGNOSTICS=ON`.\n";
  for (ConfigTier tier : {ConfigTier::kPublic, ConfigTier::kTuning, ConfigTier::kDiagnostic}) {
    bool header = false;
    for (const Spec& s : kSpecs) {
      if (s.tier != tier) continue;
      if (!header) {
        os << "\n## " << (tier == ConfigTier::kPublic ? "Public" : tier == ConfigTier::kTuning
                                                                     ? "Tuning (may change)"
                                                                     : "Diagnostic")
           << "\n\n| variable | default | values | effect |\n|---|---|---|---|\n";
        header = true;
      }
      const std::string def = *s.default_text ? s.default_text : "(empty)";
      os << "| `" << s.name << "` | `" << def << "` | " << describe_allowed(s) << " | " << s.help
         << " |\n";
    }
  }
  return os.str();
}

}  // namespace vkml
