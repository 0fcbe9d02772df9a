/* Makes an x32 system call (getpid with __X32_SYSCALL_BIT). The filter must
 * kill the process with SIGSYS. */
#include "probe.h"

#ifndef __x86_64__
#error "the x32 probe needs x86-64"
#endif

int main(void) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(39L | 0x40000000L) : "rcx", "r11", "memory");
  printf("x32 getpid returned %ld: the process was not killed\n", ret);
  return probe_verdict(1);
}
