/* Opens a software perf event on itself (user space only). */
#include "probe.h"

#include <linux/perf_event.h>

int main(void) {
  struct perf_event_attr attr = {0};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return probe_verdict(probe_try("perf_event_open", syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0)));
}
