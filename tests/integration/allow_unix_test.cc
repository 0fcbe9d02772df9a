// --allow-unix through a real sandbox: the one host socket named is in the
// view at its own path, nothing else of its directory is, and a socket that
// hands out host control is said loudly. Judged at the host's listeners:
// the named one saw the connection, its neighbour saw none.
#include <filesystem>
#include <fstream>

#include "harness.h"

namespace corral_it {
namespace {

class AllowUnix : public SandboxTest {
 protected:
  // Python inside connects to each path and prints "PATH ok" or its errno.
  Outcome Connect(const std::vector<std::string>& rules, const std::vector<std::string>& paths) {
    std::string list;
    for (const std::string& path : paths) list += (list.empty() ? "'" : ", '") + path + "'";
    return RunIn(rules, {"/usr/bin/python3", "-c",
                         "import socket\n"
                         "for path in (" + list + ",):\n"
                         "    try:\n"
                         "        socket.socket(socket.AF_UNIX).connect(path); print('ok')\n"
                         "    except OSError as e: print(e.errno)\n"});
  }
};

TEST_F(AllowUnix, ThatSocketIsReachableAndNothingElseOfItsDirectory) {
  outside_.Mkdir("sockets");
  const std::string named = outside_ / "sockets/agent.sock", neighbour = outside_ / "sockets/other.sock";
  Listener allowed = Listener::UnixPath(named);
  Listener other = Listener::UnixPath(neighbour);
  Outcome outcome = Connect({"--allow-unix", named}, {named, neighbour});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "ok\n2\n") << outcome.Describe();
  EXPECT_TRUE(allowed.GotSomething());
  EXPECT_FALSE(other.GotSomething()) << "a socket beside the named one was reached";
  std::vector<nlohmann::json> records = AuditEvents("unix");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["path"], named);
  EXPECT_FALSE(records[0].contains("host_control"));
  EXPECT_EQ(outcome.err.find("control of the host"), std::string::npos) << outcome.Describe();
}

TEST_F(AllowUnix, ASocketThatHandsOutTheHostIsSaidLoudly) {
  const std::string docker = outside_ / "docker.sock";
  Listener listener = Listener::UnixPath(docker);
  Outcome outcome = Connect({"--allow-unix", docker}, {docker});
  EXPECT_EQ(outcome.out, "ok\n") << outcome.Describe();
  EXPECT_NE(outcome.err.find("--allow-unix " + docker + ": this socket hands the command control of the host: the "
                             "Docker daemon"),
            std::string::npos)
      << outcome.Describe();
  std::vector<nlohmann::json> records = AuditEvents("unix");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_NE(records[0].value("host_control", "").find("Docker"), std::string::npos) << records[0].dump();
  Outcome explained = Corral({"explain", "--allow-unix", docker, "--", "true"});
  EXPECT_EQ(explained.exit_code, 0) << explained.Describe();
  EXPECT_NE(explained.out.find("WARNING: --allow-unix " + docker + " hands the command control of the host"),
            std::string::npos)
      << explained.Describe();
}

TEST_F(AllowUnix, WhatIsNotASocketIsRefusedAndNothingRuns) {
  const std::string file = outside_ / "plain";
  std::ofstream(file) << "x";
  for (const std::string& path : {file, outside_ / "missing.sock", outside_.path()}) {
    Outcome outcome = RunIn({"--allow-unix", path}, {"/bin/sh", "-c", "touch ran"});
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find("--allow-unix"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(std::filesystem::exists(workspace_.path() + "/ran")) << outcome.Describe();
  }
}

}  // namespace
}  // namespace corral_it
