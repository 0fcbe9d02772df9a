#include "base/blocked_signals.h"

namespace corral {
namespace {

sigset_t Everything() {
  sigset_t all;
  ::sigfillset(&all);
  return all;
}

}  // namespace

BlockedSignals::BlockedSignals(Which) : BlockedSignals(Everything()) {}

BlockedSignals::BlockedSignals(const sigset_t& set) { ::pthread_sigmask(SIG_BLOCK, &set, &previous_); }

BlockedSignals::~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace corral
