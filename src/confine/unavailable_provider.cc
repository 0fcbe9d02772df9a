#include "confine/unavailable_provider.h"

namespace corral {

Result<ConfinedArgv> UnavailableProvider::Confine(const std::vector<std::string>&, const Policy&) {
  std::string message = "no usable sandbox backend";
  if (!why_.empty()) message += " (" + why_ + ")";
  return Error(ErrorKind::kUnsupported, std::move(message)).WithCode(kSandboxUnavailableCode);
}

}  // namespace corral
