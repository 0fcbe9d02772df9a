// Signals held back in the calling thread for a stretch of code:
//
//   {
//     BlockedSignals held(BlockedSignals::kAll);
//     ... no signal's handler or default action runs here ...
//   }  // the thread's mask as it was; a signal that came meanwhile acts now
//
// The mask is the thread's own (pthread_sigmask), and is put back exactly as
// it was found, whatever the stretch changed it to.
#pragma once

#include <signal.h>

namespace corral {

class BlockedSignals {
 public:
  enum Which { kAll };
  explicit BlockedSignals(Which);
  explicit BlockedSignals(const sigset_t& set);
  ~BlockedSignals();
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace corral
