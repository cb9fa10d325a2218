// `flexjit check --grad NAME` and `flexjit run --grad NAME` (float64 CPU reference): the derived
// d(score_mod)/d(read) per read, and the errors for buffers that cannot be learnable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;


struct CheckRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CheckRun cli(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / ("flexjit-grad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> storage = {FLEXJIT_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const fs::path out = dir / "stdout", err = dir / "stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CheckRun run;
  pid_t pid = 0;
  if (::posix_spawn(&pid, FLEXJIT_CLI_PATH, &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  run.out = read_all(out);
  run.err = read_all(err);
  fs::remove_all(dir);
  return run;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliGrad, CheckPrintsTheDerivativeOfEachLearnableRead) {
  const CheckRun run = cli({"check", "--score", "score + rel[h][q_idx - kv_idx + 4095] + slope[h] * (kv_idx - q_idx)",
                            "--mask", "q_idx >= kv_idx", "--buffer", "rel:f32:16x8191", "--buffer", "slope:f32:16",
                            "--grad", "rel", "--grad", "slope"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(has(run.out, "  d/d(rel[h][q_idx - kv_idx + 4095]): 1.0\n"
                           "    indices: [h][q_idx - kv_idx + 4095]  pattern: diagonal (index 2 = 1 * (q_idx - kv_idx) + ...)\n"
                           "  d/d(slope[h]): float(kv_idx - q_idx)\n    indices: [h]  pattern: per_head\n"))
      << run.out;
}

TEST(CliGrad, BuffersThatCannotBeLearnable) {
  CheckRun run = cli({"check", "--score", "score", "--mask", "w[0] > 0.0", "--buffer", "w:f32:4", "--grad", "w"});
  EXPECT_EQ(run.code, 2);
  EXPECT_TRUE(has(run.err, "mask_mod:1:1: buffer 'w' is learnable but only mask_mod reads it; a mask has no gradient"))
      << run.err;
  run = cli({"check", "--score", "score + doc[h]", "--buffer", "doc:i32:4", "--grad", "doc"});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err,
            "error: buffer 'doc' has dtype i32 and cannot be learnable; only f32, f16 and bf16 buffers have gradients "
            "(drop `--grad doc`, or declare it as a float buffer)\n");
  run = cli({"check", "--score", "score", "--grad", "nope"});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: --grad nope: no buffer 'nope' is declared; declare it with --buffer nope:f32:DIMS first\n");
}

}  // namespace
}  // namespace flexjit::test
