/* Renames FROM to TO: a workspace file out of the writable grants, or a
 * protected directory such as .git out of the way. */
#include "probe.h"

#include <stdio.h>

int main(int argc, char **argv) {
  probe_args(argc, 2, "rename_out FROM TO");
  return probe_verdict(probe_try("rename", rename(argv[1], argv[2])));
}
