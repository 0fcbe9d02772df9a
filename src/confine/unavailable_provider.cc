#include "confine/unavailable_provider.h"

namespace corral {

Error SandboxUnavailable(const std::string& why) {
  std::string message = "no usable sandbox backend";
  if (!why.empty()) message += " (" + why + ")";
  return Error(ErrorKind::kUnsupported, std::move(message)).WithCode(kSandboxUnavailableCode);
}

Result<ConfinedArgv> UnavailableProvider::Confine(const std::vector<std::string>&, const Policy&) {
  return SandboxUnavailable(why_);
}

}  // namespace corral
