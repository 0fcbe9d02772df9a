#include "confine/wrap_env.h"

#include <unistd.h>

#include "confine/env.h"

namespace corral {

std::vector<std::string> ScrubForWrap(const Policy& policy,
                                      const std::optional<std::vector<std::string>>& environment) {
  if (!environment) return ScrubEnvironment(policy, environ);
  std::vector<const char*> entries;
  for (const std::string& entry : *environment) entries.push_back(entry.c_str());
  entries.push_back(nullptr);
  return ScrubEnvironment(policy, entries.data());
}

}  // namespace corral
