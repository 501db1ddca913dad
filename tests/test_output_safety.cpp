// Outputs that cannot hurt: device, FIFO, descriptor and symlink targets written through
// rather than replaced; temporary files that cannot be planted; stdout errors that fail the
// command; names that cannot drive a terminal, blow a report up or run in a spreadsheet; and
// a query that only reads.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "io/csv_export.hpp"
#include "report/format.hpp"
#include "io/profile_reports.hpp"
#include "io/output_file.hpp"
#include "io/json_report.hpp"
#include "nnprof/compare.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"

#ifdef NNPROF_CLI_PATH
#include "cli_run.hpp"
#endif

namespace {

namespace fs = std::filesystem;

class OutputSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnprof_output_safety_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Every entry of the directory: a temporary file left behind shows up here.
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  nnprof::io::write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

// A character device like /dev/null (1,3) in the test's own directory, never the real one:
// false where it cannot be made or opened (no root, or a nodev mount); errno says why.
bool make_null_device(const std::string& p) {
  if (::mknod(p.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) return false;
  const int fd = ::open(p.c_str(), O_WRONLY);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// ---- targets ----------------------------------------------------------------------------

TEST_F(OutputSafety, SymlinkIsFollowedAndItsTargetReplaced) {
  write_text(path("real.txt"), "old");
  fs::create_symlink("real.txt", path("link.txt"));
  write_text(path("link.txt"), "new");
  EXPECT_TRUE(fs::is_symlink(path("link.txt"))) << "the symlink was replaced by a file";
  EXPECT_EQ(slurp(path("real.txt")), "new");
  // A chain of links, and a dangling one: the file appears where the last link points.
  fs::create_symlink("link.txt", path("chain.txt"));
  write_text(path("chain.txt"), "chained");
  EXPECT_EQ(slurp(path("real.txt")), "chained");
  fs::create_symlink("later.txt", path("dangling.txt"));
  write_text(path("dangling.txt"), "created");
  EXPECT_TRUE(fs::is_symlink(path("dangling.txt")));
  EXPECT_EQ(slurp(path("later.txt")), "created");
  EXPECT_EQ(entries(), (std::vector<std::string>{"chain.txt", "dangling.txt", "later.txt", "link.txt", "real.txt"}));
}

TEST_F(OutputSafety, PlantedTemporarySymlinkIsNeverFollowed) {
  write_text(path("victim"), "precious");
  // The name the old code used (PATH.tmp-PID), planted as a symlink to a victim file.
  const std::string planted = path("out.txt.tmp-" + std::to_string(::getpid()));
  fs::create_symlink(path("victim"), planted);
  write_text(path("out.txt"), "report");
  EXPECT_EQ(slurp(path("victim")), "precious") << "the victim was written through the planted symlink";
  EXPECT_EQ(slurp(path("out.txt")), "report");
  EXPECT_TRUE(fs::is_symlink(planted));
  EXPECT_EQ(entries().size(), 3U) << "a temporary file was left behind";
}

TEST_F(OutputSafety, NewFilesGetTheUmaskModeAndReplacedFilesKeepTheirs) {
  const mode_t old_mask = ::umask(027);
  write_text(path("new.txt"), "x");
  nnprof::testing::rich_profile().save(path("new.nnprof"));
  ::umask(old_mask);
  EXPECT_EQ(fs::status(path("new.txt")).permissions(), fs::perms(0640));
  EXPECT_EQ(fs::status(path("new.nnprof")).permissions(), fs::perms(0640));
  fs::permissions(path("new.txt"), fs::perms(0604));
  write_text(path("new.txt"), "y");
  EXPECT_EQ(fs::status(path("new.txt")).permissions(), fs::perms(0604));
}

TEST_F(OutputSafety, FailuresLeaveNoTemporaryFile) {
  write_text(path("keep.txt"), "kept");
  EXPECT_THROW(nnprof::io::write_file_atomically(path("keep.txt"),
                                                 [](std::ostream&) { throw nnprof::Error("writer failed"); }),
               nnprof::Error);
  EXPECT_THROW(nnprof::io::write_file_by_name(path("keep.txt"),
                                              [](const std::string&) { throw nnprof::Error("writer failed"); }),
               nnprof::Error);
  EXPECT_EQ(slurp(path("keep.txt")), "kept");
  EXPECT_EQ(entries(), std::vector<std::string>{"keep.txt"});
  EXPECT_THROW(write_text(dir_.string(), "x"), nnprof::Error);  // a directory
}

TEST_F(OutputSafety, FifoIsWrittenToNotReplaced) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0) << std::strerror(errno);
  std::string received;
  std::thread reader([&] { received = slurp(path("fifo")); });
  write_text(path("fifo"), "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";

  // Profile::save goes through a private file whose bytes are copied into the FIFO.
  std::string db;
  std::thread db_reader([&] { db = slurp(path("fifo")); });
  nnprof::testing::rich_profile().save(path("fifo"));
  db_reader.join();
  EXPECT_EQ(db.substr(0, 15), "SQLite format 3");
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputSafety, OwnDescriptorIsWrittenAtItsOffset) {
  // /dev/stdout is a link to /proc/self/fd/1: an appending descriptor keeps what it holds.
  write_text(path("log.txt"), "first\n");
  const int fd = ::open(path("log.txt").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  write_text("/proc/self/fd/" + std::to_string(fd), "second\n");
  ::close(fd);
  EXPECT_EQ(slurp(path("log.txt")), "first\nsecond\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"log.txt"});
}

TEST_F(OutputSafety, CharacterDeviceIsWrittenToNotReplaced) {
  if (!make_null_device(path("null")))
    GTEST_SKIP() << "cannot create and open a device node here (" << std::strerror(errno) << ")";
  write_text(path("null"), "discarded");
  nnprof::testing::rich_profile().save(path("null"));
  struct stat st {};
  ASSERT_EQ(::lstat(path("null").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device was replaced by a regular file";
  EXPECT_EQ(entries(), std::vector<std::string>{"null"});
}

// Runs `check` in a child process with a private mount namespace and its own /dev (a tmpfs
// with null, full and stdout), so that a regression cannot replace the machine's /dev/null.
// Returns the child's exit status, or -1 when mount namespaces are not permitted here.
int in_private_dev(const std::function<int()>& check) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(200);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(200);
    if (::mount("tmpfs", "/dev", "tmpfs", 0, "mode=755") != 0) ::_exit(200);
    if (::mknod("/dev/null", S_IFCHR | 0666, ::makedev(1, 3)) != 0 ||
        ::mknod("/dev/full", S_IFCHR | 0666, ::makedev(1, 7)) != 0 || ::symlink("/proc/self/fd/1", "/dev/stdout") != 0)
      ::_exit(201);
    ::_exit(check());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 200) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool is_char_device(const char* p) {
  struct stat st {};
  return ::lstat(p, &st) == 0 && S_ISCHR(st.st_mode);
}

TEST(OutputSafetyDev, SaveToDevNullKeepsTheDevice) {
  const nnprof::Profile p = nnprof::testing::rich_profile();
  const int status = in_private_dev([&] {
    try {
      p.save("/dev/null");
    } catch (const std::exception&) {
      return 1;
    }
    if (!is_char_device("/dev/null")) return 2;
    try {
      p.save("/dev/full");
      return 3;  // a full device must fail the save
    } catch (const nnprof::Error& e) {
      if (std::string(e.what()).find("No space left on device") == std::string::npos) return 4;
    }
    return is_char_device("/dev/full") ? 0 : 5;
  });
  if (status < 0) GTEST_SKIP() << "mount namespaces are not permitted here (unshare(CLONE_NEWNS) needs root)";
  EXPECT_EQ(status, 0) << "1: save failed, 2: /dev/null replaced, 3: no error on /dev/full, 4: wrong message, "
                          "5: /dev/full replaced";
}

#ifdef NNPROF_CLI_PATH
// `command` run by the shell as it stands; its stdout (where the command sends it) read back.
CliRun run_shell(const std::string& command) {
  CliRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

TEST_F(OutputSafety, CliWritesToDevicesInAPrivateDev) {
  const std::string profile = path("p.nnprof");
  nnprof::testing::export_profile().save(profile);
  const std::string cli = NNPROF_CLI_PATH;
  const std::string out = path("out.txt"), err = path("err.txt");
  const int status = in_private_dev([&] {
    const auto run = [&](const std::string& args) { return std::system((cli + " " + args).c_str()); };
    const auto exit_status = [](int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1; };
    for (const char* args : {"report {} -f text -o /dev/null", "report {} -f html -o /dev/null", "export {} --to csv -o /dev/null",
                             "export {} -o /dev/null --to json", "report {} -f md -o /dev/null"}) {
      std::string a = args;
      a.replace(a.find("{}"), 2, profile);
      if (exit_status(run(a + " 2>/dev/null")) != 0) return 10;
      if (!is_char_device("/dev/null")) return 11;
    }
    if (exit_status(run("report " + profile + " -f text -o /dev/full 2>" + err)) != 2) return 12;
    if (slurp(err).find("No space left on device") == std::string::npos) return 13;
    if (!is_char_device("/dev/full")) return 14;
    if (exit_status(run("report " + profile + " -f text -o /dev/stdout >" + out + " 2>/dev/null")) != 0) return 15;
    if (!fs::is_symlink("/dev/stdout")) return 16;
    if (slurp(out).find("nnprof report") == std::string::npos) return 17;
#ifdef NNPROF_RECORD_TESTS
    // record: the agent's Profile::save writes the device; the program's status is kept.
    const std::string program = "/usr/bin/python3 -c 'import sys; print(1); sys.exit(3)'";
    if (exit_status(run("record -o /dev/null -- " + program + " >" + out + " 2>" + err)) != 3) return 18;
    if (!is_char_device("/dev/null")) return 19;
    if (slurp(err).find("profile written to /dev/null") == std::string::npos || slurp(out) != "1\n") return 20;
#endif
    return 0;
  });
  if (status < 0) GTEST_SKIP() << "mount namespaces are not permitted here (unshare(CLONE_NEWNS) needs root)";
  EXPECT_EQ(status, 0) << "10-11: writing /dev/null failed or replaced it; 12-14: /dev/full not reported or "
                          "replaced; 15-17: /dev/stdout replaced or not written; 18-20: record -o /dev/null "
                          "changed the status, replaced the device or wrote nothing. stderr: "
                       << slurp(err);
}

TEST_F(OutputSafety, CommandsFailWhenStandardOutputCannotBeWritten) {
  const std::string profile = path("p.nnprof");
  nnprof::testing::synthetic_profile(2000, 2).save(profile);
  // /dev/full is only opened by the shell here, for writing: nothing replaces it.
  for (const std::string& args : {"query " + profile + " \"select * from slice\"", "report " + profile,
                                 "report " + profile + " --critical-path", "export " + profile + " --to csv",
                                 std::string("report --help")}) {
    const CliRun r = run_shell(std::string(NNPROF_CLI_PATH) + " " + args + " 2>&1 >/dev/full");
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("cannot write to standard output: No space left on device"), std::string::npos)
        << args << "\n" << r.output;
  }
}

TEST_F(OutputSafety, QueryCliMessagesAndFormatHelp) {
  const std::string profile = path("p.nnprof");
  nnprof::testing::export_profile().save(profile);
  CliRun r = run_cli("query " + profile + " \"\"");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("empty SQL"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not an error"), std::string::npos) << r.output;
  r = run_cli("query --timeout 0.2 " + profile +
              " \"with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c\"");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--timeout"), std::string::npos) << r.output;
  for (const char* help : {"report --help", "export --help", "compare --help", "model-compare --help"}) {
    r = run_cli(help);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("->"), std::string::npos) << help << "\n" << r.output;
    EXPECT_EQ(r.output.find(" OR "), std::string::npos) << help << "\n" << r.output;
    EXPECT_NE(r.output.find("FORMAT"), std::string::npos) << help << "\n" << r.output;
  }
  r = run_cli("report " + profile + " --format bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("unknown format 'bogus'"), std::string::npos) << r.output;
  r = run_cli("report " + profile + " --format MD");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("# nnprof report"), std::string::npos) << r.output;
}
#endif

// ---- terminal escapes -------------------------------------------------------------------

TEST(PlainText, EscapesWhatDrivesATerminal) {
  using nnprof::report::plain_text;
  EXPECT_EQ(plain_text("matmul µs ✓"), "matmul µs ✓");
  EXPECT_EQ(plain_text("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
  EXPECT_EQ(plain_text("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(plain_text("csi\xc2\x9b" "2J"), "csi\\u009b2J");      // C1 CSI as UTF-8
  EXPECT_EQ(plain_text("bad\xff\xc3"), "bad\\xff\\xc3");          // not UTF-8
  EXPECT_EQ(plain_text("del\x7f"), "del\\x7f");
  EXPECT_EQ(plain_text("rtl\xe2\x80\xae" "x"), "rtl\\u202ex");    // RIGHT-TO-LEFT OVERRIDE
  const std::string once = plain_text("\x1b[2J\xc2\x9b\xff\n");
  EXPECT_EQ(plain_text(once), once) << "escaping twice must change nothing";
}

// A name that would clear the screen, set the title and forge a line of the report.
const std::string kEvil = "evil\x1b[2J\x1b]0;title\x07\xc2\x9b" "31m\nFORGED LINE";

void expect_inert(const std::string& out, const std::string& what) {
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << what << ": ESC reached the output";
  EXPECT_EQ(out.find('\x07'), std::string::npos) << what << ": BEL reached the output";
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << what << ": a C1 control reached the output";
  EXPECT_EQ(out.find("\nFORGED LINE"), std::string::npos) << what << ": a name started a line of its own";
  EXPECT_NE(out.find("evil\\x1b[2J"), std::string::npos) << what << ": the name is not shown escaped";
}

TEST(PlainText, TextReportCriticalPathAndCompareEscapeNames) {
  nnprof::Profile p = nnprof::testing::synthetic_profile(3000, 2);
  p.strings[0] = kEvil;  // train_step, on every critical path
  p.threads[0].name = kEvil;
  p.annotations["model"] = kEvil;
  std::ostringstream text;
  nnprof::io::write_text_report(p, text);
  expect_inert(text.str(), "text report");
  std::ostringstream critical;
  nnprof::write_critical_path(p, nnprof::critical_path(p), critical);
  expect_inert(critical.str(), "critical path");
  std::ostringstream compared;
  nnprof::write_comparison(nnprof::compare(p, p), compared, nnprof::ReportFormat::Text);
  expect_inert(compared.str(), "compare");
}

// ---- name caps --------------------------------------------------------------------------

TEST(NameCap, CutsAtACharacterBoundaryAndSaysHowMuchIsLeft) {
  using nnprof::report::capped_name;
  EXPECT_EQ(capped_name("short"), "short");
  std::string name(199, 'a');
  for (int i = 0; i < 60; ++i) name += "µ";  // 2 bytes each: the cut falls between them
  const std::string capped = capped_name(name);
  EXPECT_EQ(capped, std::string(199, 'a') + "µ\u2026 (118 more bytes)");
  EXPECT_EQ(capped_name(capped), capped) << "capping twice must change nothing";
  EXPECT_EQ(capped_name(std::string(240, 'x')), std::string(240, 'x'));  // room for the marker
  EXPECT_EQ(capped_name(std::string(241, 'x')), std::string(200, 'x') + "\u2026 (41 more bytes)");
}

TEST(NameCap, AMegabyteNameGivesReportsOfBoundedSize) {
  nnprof::Profile p = nnprof::testing::export_profile();
  const auto report_sizes = [](const nnprof::Profile& profile) {
    std::ostringstream text, md, html;
    nnprof::io::write_text_report(profile, text);
    nnprof::io::write_markdown_report(profile, md);
    nnprof::io::write_html_report(profile, html);
    // The Markdown report's trailing data block (for `nnprof compare`) is data: names whole.
    const std::string shown = md.str().substr(0, md.str().find("<!-- nnprof-data"));
    return std::array<std::size_t, 3>{text.str().size(), shown.size(), html.str().size()};
  };
  const auto before = report_sizes(p);
  const std::string huge(1 << 20, 'n');
  p.strings[nnprof::testing::kMatmul] = huge;
  p.threads[0].name = huge;
  const auto after = report_sizes(p);
  for (std::size_t i = 0; i < after.size(); ++i)
    EXPECT_LT(after[i], before[i] + 64 * 1024) << "report " << i << " grew from " << before[i] << " to " << after[i];
  std::ostringstream text;
  nnprof::io::write_text_report(p, text);
  EXPECT_NE(text.str().find("(1048376 more bytes)"), std::string::npos);
  // The data formats keep the name whole, and so does the Markdown report's data block.
  std::ostringstream md;
  nnprof::io::write_markdown_report(p, md);
  EXPECT_NE(md.str().find(huge, md.str().find("<!-- nnprof-data")), std::string::npos);
  std::ostringstream json, csv;
  nnprof::io::write_json_report(p, json);
  nnprof::io::write_csv(p, csv);
  EXPECT_NE(json.str().find(huge), std::string::npos);
  EXPECT_NE(csv.str().find(huge), std::string::npos);
}

// ---- CSV ----------------------------------------------------------------------------------

TEST(CsvFormulas, TextCellsThatStartAFormulaAreNeutralised) {
  using nnprof::io::csv_field;
  EXPECT_EQ(csv_field("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(csv_field("+1"), "'+1");
  EXPECT_EQ(csv_field("-cmd"), "'-cmd");
  EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_field("\tx"), "'\tx");
  EXPECT_EQ(csv_field("\rx"), "\"'\rx\"");
  EXPECT_EQ(csv_field("matmul-1"), "matmul-1");
  // Numbers never go through csv_field: a negative number stays a number.
  nnprof::Profile p = nnprof::testing::export_profile();
  p.strings[nnprof::testing::kMatmul] = "=1+2";
  std::ostringstream csv;
  nnprof::io::write_csv(p, csv);
  EXPECT_NE(csv.str().find("\r\n'=1+2,"), std::string::npos) << csv.str();
}

// ---- query --------------------------------------------------------------------------------

class ReadOnlyQuery : public OutputSafety {
 protected:
  void SetUp() override {
    OutputSafety::SetUp();
    nnprof::testing::export_profile().save(path("p.nnprof"));
  }
  std::string error_of(const std::string& sql, double timeout = nnprof::kDefaultQueryTimeoutSeconds) {
    try {
      (void)nnprof::query_profile(path("p.nnprof"), sql, timeout);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(ReadOnlyQuery, WritesAttachAndSchemaChangesAreRefused) {
  const std::string copy = path("copy.db");
  std::string e = error_of("vacuum into '" + copy + "'");
  EXPECT_NE(e.find("only reads"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(copy)) << "VACUUM INTO wrote a copy";
  e = error_of("attach database '" + path("other.db") + "' as other");
  EXPECT_NE(e.find("only reads"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(path("other.db")));
  for (const char* sql : {"insert into annotation values ('k', 'v')", "delete from thread", "drop table thread",
                          "create temp table t(x)", "pragma writable_schema = 1", "begin", "pragma journal_mode"}) {
    e = error_of(sql);
    EXPECT_NE(e.find("only reads"), std::string::npos) << sql << ": " << e;
  }
  const nnprof::QueryResult ok = nnprof::query_profile(path("p.nnprof"), "pragma table_info(thread)");
  EXPECT_FALSE(ok.rows.empty());
  // The table-valued form reads too (its first use declares a virtual table, which SQLite's
  // authorizer reports as a schema update).
  const nnprof::QueryResult columns =
      nnprof::query_profile(path("p.nnprof"), "select name from pragma_table_info('thread') order by cid");
  EXPECT_FALSE(columns.rows.empty());
  e = error_of("update sqlite_master set sql = ''");  // SQLite refuses it itself
  EXPECT_NE(e.find("may not be modified"), std::string::npos) << e;
}

TEST_F(ReadOnlyQuery, OneStatementAndNotAnEmptyOne) {
  std::string e = error_of("select 1; select 2");
  EXPECT_NE(e.find("one SQL statement"), std::string::npos) << e;
  EXPECT_NE(e.find("select 2"), std::string::npos) << e;
  e = error_of("select 1; vacuum");
  EXPECT_NE(e.find("one SQL statement"), std::string::npos) << e;
  const nnprof::QueryResult r = nnprof::query_profile(path("p.nnprof"), "select 1 as one; -- a comment\n");
  ASSERT_EQ(r.rows.size(), 1U);
  EXPECT_EQ(r.rows[0][0], "1");
  for (const char* sql : {"", "   ", "-- only a comment"}) {
    e = error_of(sql);
    EXPECT_NE(e.find("empty SQL"), std::string::npos) << "'" << sql << "': " << e;
  }
}

TEST_F(ReadOnlyQuery, ARecursiveViewIsStoppedByTheTimeLimit) {
  // A crafted profile: a view that never ends.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("p.nnprof").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "create view forever as with recursive c(x) as (select 1 union all select x + 1 from c) "
                         "select x from c",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string e = error_of("select count(*) from forever", 0.3);
  EXPECT_NE(e.find("stopped after 0.3 s"), std::string::npos) << e;
  EXPECT_NE(e.find("--timeout"), std::string::npos) << e;
}

}  // namespace
