/* Loads a BPF program (a socket filter that returns 0) and creates a map. */
#include "probe.h"

#include <linux/bpf.h>

int main(void) {
  struct bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  union bpf_attr prog = {0};
  prog.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  prog.insns = (unsigned long)insns;
  prog.insn_cnt = 2;
  prog.license = (unsigned long)"GPL";
  int escaped = probe_try("bpf(BPF_PROG_LOAD)", syscall(SYS_bpf, BPF_PROG_LOAD, &prog, sizeof prog));
  union bpf_attr map = {0};
  map.map_type = BPF_MAP_TYPE_ARRAY;
  map.key_size = 4;
  map.value_size = 4;
  map.max_entries = 1;
  escaped |= probe_try("bpf(BPF_MAP_CREATE)", syscall(SYS_bpf, BPF_MAP_CREATE, &map, sizeof map));
  return probe_verdict(escaped);
}
