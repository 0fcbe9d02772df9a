// The corral binary as linked: with CORRAL_STATIC_PIE (the default where
// glibc's archives are there) one static PIE, which loads no code at run
// time, no dynamic loader, no shared library and so no name service module,
// and still gets address-space randomisation. Read from the ELF file itself.
#include <elf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.h"

namespace corral_it {
namespace {

struct ElfFacts {
  uint16_t type = 0;
  bool interpreter = false;  // PT_INTERP
  int needed = 0;            // DT_NEEDED entries
  bool dynamic = false;      // PT_DYNAMIC (a static PIE has one, for its own relocations)
};

ElfFacts ReadElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ElfFacts facts;
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    ADD_FAILURE() << path << " is not an ELF file";
    return facts;
  }
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  facts.type = header.e_type;
  for (int i = 0; i < header.e_phnum; ++i) {
    size_t at = header.e_phoff + static_cast<size_t>(i) * header.e_phentsize;
    if (at + sizeof(Elf64_Phdr) > bytes.size()) break;
    Elf64_Phdr program;
    std::memcpy(&program, bytes.data() + at, sizeof program);
    if (program.p_type == PT_INTERP) facts.interpreter = true;
    if (program.p_type != PT_DYNAMIC) continue;
    facts.dynamic = true;
    for (size_t d = program.p_offset; d + sizeof(Elf64_Dyn) <= program.p_offset + program.p_filesz; d += sizeof(Elf64_Dyn)) {
      if (d + sizeof(Elf64_Dyn) > bytes.size()) break;
      Elf64_Dyn entry;
      std::memcpy(&entry, bytes.data() + d, sizeof entry);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_NEEDED) ++facts.needed;
    }
  }
  return facts;
}

#ifdef CORRAL_STATIC_PIE
TEST(StaticBinary, CorralIsAStaticPieThatLoadsNoSharedObject) {
  ElfFacts facts = ReadElf(CorralBin());
  EXPECT_EQ(facts.type, ET_DYN) << "position-independent, so the kernel randomises where it loads";
  EXPECT_FALSE(facts.interpreter) << "no dynamic loader";
  EXPECT_EQ(facts.needed, 0) << "no shared library";
}
#else
TEST(StaticBinary, CorralIsADynamicPieWhenBuiltWithoutTheStaticPie) {
  ElfFacts facts = ReadElf(CorralBin());
  EXPECT_EQ(facts.type, ET_DYN);
  EXPECT_TRUE(facts.interpreter);
  EXPECT_GT(facts.needed, 0);
}
#endif

}  // namespace
}  // namespace corral_it
