/* Makes an i386 system call through `int $0x80` (getpid = 20). The filter
 * must kill the process with SIGSYS. */
#include "probe.h"

#ifndef __x86_64__
#error "the int 0x80 probe needs x86-64"
#endif

int main(void) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "r8", "r9", "r10", "r11", "memory");
  printf("i386 getpid returned %ld: the process was not killed\n", ret);
  return probe_verdict(1);
}
