// Merging the user and project config layers into one Config.
//
// The user layer applies first, as given. The project layer can only narrow
// (see config.h and docs/config.md for the full table); each widening
// attempt is refused with an error at the project file's line and key, code
// "config_project_widens", whose message says that only the user config can
// make that change.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "config/config_file.h"

namespace corral {

struct MergeContext {
  std::string user_file;       // named in refusals even when it does not exist
  std::string workspace_root;  // absolute canonical text; project grants must lie inside it
  std::optional<Preset> preset;  // the caller's --preset, which beats the user file's
};

Result<Config> MergeConfigLayers(const std::optional<ConfigLayer>& user, const std::optional<ConfigLayer>& project,
                                 const MergeContext& context);

}  // namespace corral
