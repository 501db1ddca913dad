// The global profiler stays usable until the process ends: scopes recorded by static
// destructors land in a profile saved by an atexit handler, with the right metadata.
#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "nnprof/nnprof.hpp"

namespace {

TEST(ExitPath, StaticDestructorScopesAndMetadataReachAProfileSavedAtExit) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("nnprof-exit-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "after-main.nnprof").string();
  const std::string program = PROFILER_AFTER_MAIN_PATH;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl(program.c_str(), program.c_str(), out.c_str(), "--marker", "two words", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // Under AddressSanitizer a use after free exits non-zero here.
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0);

  const nnprof::Profile p = nnprof::Profile::load(out);
  for (const char* name : {"main", "static destructor", "static destructor by name"}) {
    const nnprof::ScopeStats* s = p.find_scope(name);
    EXPECT_NE(s, nullptr) << name << " is missing from the profile";
    if (s != nullptr) {
      EXPECT_EQ(s->time.count, 1u) << name;
    }
  }
  EXPECT_EQ(p.meta.command_line, program + " " + out + " --marker two words");
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(p.meta.os, fmt::format("{} {} {}", u.sysname, u.release, u.machine));
  EXPECT_EQ(p.meta.hostname, u.nodename);
  EXPECT_EQ(p.meta.pid, child);
  std::filesystem::remove_all(dir);
}

}  // namespace
