// A hint to the CPU that the calling thread only waits in a loop: x86's
// PAUSE, arm's YIELD (nothing elsewhere). Some 40 to 140 cycles on x86.
//
// For short spins before a sleep: where the awaited event is due within
// microseconds, waking a CPU that slept on a futex or a read (above all a
// virtual machine's, which the host must schedule again) takes longer than
// the event. Safe anywhere, also between clone and exec.
#pragma once

namespace corral {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace corral
