// The exec boundary: a program in a grant without exec never runs, whether
// the grant lies under the private /tmp or under $HOME (the isolated home:
// for the unprivileged pass, the staged home). Judged from outside: the
// canary file the program would create in the workspace is absent.
//
// Two layers hold it, and each has its own test: the grant's bind is
// noexec (the loader cannot map the program either, which Landlock does not
// check), and the private tree above the grant carries no Landlock exec
// right for the grant to inherit (a program put there does not run either,
// which only Landlock can refuse: that tmpfs is not noexec).
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "harness.h"

namespace corral_it {
namespace {

// A fresh directory under the test's own $HOME, removed with everything in it.
class HomeDir {
 public:
  HomeDir() {
    const char* home = ::getenv("HOME");
    EXPECT_TRUE(home != nullptr && home[0] == '/') << "the suite needs $HOME";
    char resolved[PATH_MAX];
    std::string base = home != nullptr && ::realpath(home, resolved) != nullptr ? resolved : "/nonexistent";
    path_ = base + "/" + RandomToken("corral-exec");
    std::filesystem::create_directories(path_);
  }
  ~HomeDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The ELF interpreter /usr/bin/touch names (PT_INTERP), symlinks resolved.
std::string Loader() {
  std::string elf = ReadFile("/usr/bin/touch").value_or("");
  if (elf.size() < sizeof(Elf64_Ehdr)) return "";
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(elf.data());
  for (int i = 0; i < header->e_phnum; ++i) {
    size_t at = header->e_phoff + static_cast<size_t>(i) * header->e_phentsize;
    if (at + sizeof(Elf64_Phdr) > elf.size()) break;
    const auto* program = reinterpret_cast<const Elf64_Phdr*>(elf.data() + at);
    if (program->p_type != PT_INTERP || program->p_offset + program->p_filesz > elf.size()) continue;
    std::string interp(elf.data() + program->p_offset);
    char resolved[PATH_MAX];
    return ::realpath(interp.c_str(), resolved) != nullptr ? resolved : interp;
  }
  return "";
}

class ExecBoundary : public SandboxTest {
 protected:
  // Puts an ELF (a copy of touch) and a script that each create their
  // argument into `dir`, both 0755.
  static void Stage(const std::string& dir) {
    WriteFile(dir + "/touch", ReadFile("/usr/bin/touch").value_or(""), 0755);
    WriteFile(dir + "/plant.sh", "#!/bin/sh\n: > \"$1\"\n", 0755);
  }

  // Runs the ELF and the script from `dir` under `flag dir`; returns which
  // canaries appeared in the workspace.
  std::vector<std::string> Planted(const std::string& flag, const std::string& dir, const std::string& tag) {
    std::string elf = workspace_ / (tag + "-elf"), script = workspace_ / (tag + "-script");
    Outcome outcome = RunIn({flag, dir}, {"sh", "-c", "\"$1\"/touch \"$2\"; \"$1\"/plant.sh \"$3\"; true", "sh", dir,
                                          elf, script});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    std::vector<std::string> planted;
    for (const std::string& canary : {elf, script}) {
      if (Exists(canary)) planted.push_back(canary);
    }
    return planted;
  }
};

TEST_F(ExecBoundary, ProgramsInAGrantWithoutExecDoNotRunUnderTmpOrHome) {
  TempDir tmp("corral-exec");
  HomeDir home;
  for (const std::string& dir : {tmp.path(), home.path()}) {
    Stage(dir);
    for (const std::string flag : {"--allow-read", "--allow-write"}) {
      std::string tag = flag.substr(8) + (dir == tmp.path() ? "-tmp" : "-home");
      EXPECT_EQ(Planted(flag, dir, tag), std::vector<std::string>{}) << flag << " " << dir;
    }
    // Control: the canaries work, under --allow-exec.
    EXPECT_EQ(Planted("--allow-exec", dir, dir == tmp.path() ? "exec-tmp" : "exec-home").size(), 2u) << dir;
  }
}

// The noexec layer alone: the dynamic loader (exec'd from /usr) maps the
// program with PROT_EXEC, which a noexec mount refuses and Landlock does not
// check. So a library in such a grant does not load either.
TEST_F(ExecBoundary, TheLoaderCannotMapAProgramFromAGrantWithoutExec) {
  const std::string loader = Loader();
  ASSERT_FALSE(loader.empty());
  TempDir tmp("corral-exec");
  HomeDir home;
  for (const std::string& dir : {tmp.path(), home.path()}) {
    Stage(dir);
    for (const std::string flag : {"--allow-read", "--allow-write", "--allow-exec"}) {
      std::string canary = workspace_ / RandomToken("loaded");
      Outcome outcome = RunIn({flag, dir}, {"sh", "-c", "\"$1\" \"$2\"/touch \"$3\"; true", "sh", loader, dir, canary});
      EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
      EXPECT_EQ(Exists(canary), flag == "--allow-exec") << flag << " " << dir << " " << outcome.Describe();
    }
  }
}

// The Landlock layer alone: with a grant without exec below it, the private
// /tmp or $HOME carries no exec right, so the grant cannot inherit one. A
// program the command copies there does not run: the tmpfs is not noexec,
// only Landlock refuses it. Without such a grant, /tmp stays executable.
TEST_F(ExecBoundary, APrivateTreeAboveAGrantWithoutExecHasNoExecRight) {
  TempDir tmp("corral-exec");
  HomeDir home;
  for (const std::string& dir : {tmp.path(), home.path()}) {
    const std::string tree = dir == tmp.path() ? "/tmp" : "\"$HOME\"";
    for (const std::string flag : {"--allow-read", "--allow-write", "--allow-exec"}) {
      std::string canary = workspace_ / RandomToken("copied");
      Outcome outcome = RunIn({flag, dir}, {"sh", "-c", "cp /usr/bin/touch " + tree + "/t && " + tree + "/t \"$1\"; true",
                                            "sh", canary});
      EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
      EXPECT_EQ(Exists(canary), flag == "--allow-exec") << flag << " " << dir << " " << outcome.Describe();
    }
  }
  std::string canary = workspace_ / "plain";
  Outcome plain = RunIn({}, {"sh", "-c", "cp /usr/bin/touch /tmp/t && /tmp/t \"$1\"", "sh", canary});
  EXPECT_TRUE(Exists(canary)) << "control: /tmp is executable " << plain.Describe();
}

}  // namespace
}  // namespace corral_it
