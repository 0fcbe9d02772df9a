#include "confine/apparmor_profile.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(AppArmorProfile, NamesTheBinaryAndAllowsUserNamespacesOnly) {
  Result<std::string> profile = AppArmorProfile("/opt/tools/bin/corral");
  ASSERT_TRUE(profile.ok()) << profile.error().ToString();
  EXPECT_NE(profile->find("profile corral \"/opt/tools/bin/corral\" flags=(unconfined) {"), std::string::npos)
      << *profile;
  EXPECT_NE(profile->find("\n  userns,\n"), std::string::npos) << *profile;
  EXPECT_NE(profile->find("abi <abi/4.0>,"), std::string::npos) << *profile;
}

TEST(AppArmorProfile, RefusesAPathAppArmorWouldReadAsAPattern) {
  for (const char* path : {"relative/corral", "", "/opt/*/corral", "/opt/a\"b/corral", "/opt/a\nb", "/opt/{a,b}",
                           "/opt/a\\b", "/opt/x?"}) {
    Result<std::string> profile = AppArmorProfile(path);
    EXPECT_FALSE(profile.ok()) << path;
    if (!profile.ok()) {
      EXPECT_EQ(profile.error().kind(), ErrorKind::kUsage) << path;
    }
  }
}

TEST(AppArmorProfile, TheLoadCommandNamesTheFile) {
  EXPECT_EQ(AppArmorLoadCommand("/etc/apparmor.d/corral"), "sudo apparmor_parser -r /etc/apparmor.d/corral");
}

}  // namespace
}  // namespace corral
