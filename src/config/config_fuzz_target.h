// One fuzz input through every TOML parser path, checking the error contract.
// Shared by the libFuzzer harness (config_fuzz.cc) and the deterministic
// ConfigFuzzSmoke test; header only, never part of the library.
//
// The contract: each parser either accepts the text or returns an Error of
// kind kConfig whose message starts with "<file>:<line>:<column>: " (line and
// column at least 1) and contains no control characters. Accepted configs go
// on through the merge and ApplyTo, accepted profiles through ToPolicySpec
// and Fingerprint: none of it may crash.
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_file.h"
#include "config/config_merge.h"
#include "config/profile_file.h"

namespace corral::config_fuzzing {

inline constexpr char kUserFile[] = "/fuzz/home/.config/corral/config.toml";
inline constexpr char kProjectFile[] = "/fuzz/ws/corral.toml";
inline constexpr char kProfileFile[] = "/fuzz/profile.toml";
inline constexpr char kHome[] = "/fuzz/home";

// Empty when `error` keeps the contract for `file`; else what is wrong.
inline std::string CheckRejection(const Error& error, std::string_view file) {
  const std::string& message = error.message();
  if (error.kind() != ErrorKind::kConfig) return "wrong kind: " + message;
  std::string prefix = std::string(file) + ":";
  if (message.rfind(prefix, 0) != 0) return "no file name: " + message;
  size_t at = prefix.size();
  for (int part = 0; part < 2; ++part) {
    size_t digits = at;
    while (digits < message.size() && std::isdigit(static_cast<unsigned char>(message[digits]))) ++digits;
    if (digits == at || message.compare(at, digits - at, "0") == 0) return "no line/column: " + message;
    if (digits >= message.size() || message[digits] != ':') return "no line/column: " + message;
    at = digits + 1;
  }
  for (char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "control character in: " + message;
  }
  return "";
}

// Runs `text` as a user file, a project file (merged over the user reading of
// the same text) and a profile. Returns the first contract violation.
inline std::optional<std::string> ExerciseConfigParsers(std::string_view text) {
  Result<ConfigLayer> user = ParseConfigText(text, ParseContext{kUserFile, ConfigScope::kUser, kHome});
  if (!user.ok()) {
    if (std::string bad = CheckRejection(user.error(), kUserFile); !bad.empty()) return bad;
  }
  Result<ConfigLayer> project = ParseConfigText(text, ParseContext{kProjectFile, ConfigScope::kProject, kHome});
  if (!project.ok()) {
    if (std::string bad = CheckRejection(project.error(), kProjectFile); !bad.empty()) return bad;
  } else {
    std::optional<ConfigLayer> base;
    if (user.ok()) base = user.value();
    Result<Config> merged = MergeConfigLayers(base, project.value(), MergeContext{kUserFile, "/fuzz/ws", std::nullopt});
    if (!merged.ok()) {
      if (std::string bad = CheckRejection(merged.error(), kProjectFile); !bad.empty()) return bad;
    } else {
      PolicySpec spec;
      merged->ApplyTo(spec);
    }
  }
  Result<Profile> profile = ParseProfileText(text, kProfileFile, kHome);
  if (!profile.ok()) {
    if (std::string bad = CheckRejection(profile.error(), kProfileFile); !bad.empty()) return bad;
  } else {
    (void)Fingerprint(profile.value());
    (void)ToPolicySpec(profile.value());
  }
  return std::nullopt;
}

}  // namespace corral::config_fuzzing
