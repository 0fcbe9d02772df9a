#include "kernel/rlimits.h"

#include <errno.h>

#include "base/invariant.h"
#include "base/mutant.h"

namespace corral {

void RlimitSet::Add(int resource, rlim_t soft, rlim_t hard) {
  CORRAL_INVARIANT(count < sizeof entries / sizeof entries[0], "more rlimits than RlimitSet holds");
  if (count < sizeof entries / sizeof entries[0]) entries[count++] = Entry{resource, soft, hard < soft ? soft : hard};
}

int ApplyRlimitsChild(const RlimitSet& limits) {
  if (MutantActive(Mutant::kResourceLimits)) return 0;
  for (size_t i = 0; i < limits.count; ++i) {
    const RlimitSet::Entry& entry = limits.entries[i];
    struct rlimit current = {};
    if (::getrlimit(entry.resource, &current) != 0) return errno;
    rlim_t soft = entry.soft;
    rlim_t hard = entry.hard;
    if (current.rlim_max != RLIM_INFINITY && current.rlim_max < hard) hard = current.rlim_max;
    if (soft > hard) soft = hard;
    struct rlimit wanted = {soft, hard};
    if (::setrlimit(entry.resource, &wanted) != 0) return errno;
  }
  return 0;
}

}  // namespace corral
