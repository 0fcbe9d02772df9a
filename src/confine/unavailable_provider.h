// UnavailableProvider: the backend of last resort, when nothing on this host
// can confine a command. Confine always fails with ErrorKind::kUnsupported,
// code "SANDBOX_UNAVAILABLE", message "no usable sandbox backend".
//
// This is deliberate: running a "confined" command without a real backend
// would be worse than running nothing, because the caller believes it is
// safe. Fail closed.
#pragma once

#include "confine/provider.h"

namespace corral {

inline constexpr const char* kSandboxUnavailableCode = "SANDBOX_UNAVAILABLE";

// The error UnavailableProvider::Confine returns: "no usable sandbox backend
// (<why>)", kind kUnsupported, code SANDBOX_UNAVAILABLE. Empty `why`: no
// parenthesis.
Error SandboxUnavailable(const std::string& why);

class UnavailableProvider final : public Provider {
 public:
  // `why`: what detection found, appended to the message when not empty.
  explicit UnavailableProvider(std::string why = {}) : why_(std::move(why)) {}
  Result<ConfinedArgv> Confine(const std::vector<std::string>& argv, const Policy& policy) override;
  std::string_view name() const override { return "unavailable"; }

 private:
  std::string why_;
};

}  // namespace corral
