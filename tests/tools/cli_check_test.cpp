// `flexjit check`, run as a new user would: the built binary, its exit codes, stdout and stderr.
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

CheckRun check(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / ("flexjit-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> storage = {FLEXJIT_CLI_PATH, "check"};
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

TEST(CliCheck, ShowsWhatFlexjitUnderstood) {
  const CheckRun run = check({"--score", "score + slope[h] * (kv_idx-q_idx)", "--mask", "q_idx >= kv_idx",
                         "--buffer", "slope:f32:16"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(has(run.out, "score_mod: score + slope[h] * (kv_idx - q_idx)\n  type:           float\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  free variables: score, h, q_idx, kv_idx\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  buffers read:   slope (f32 [16])\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  d/d(score):     1.0\n")) << run.out;
  EXPECT_TRUE(has(run.out, "mask_mod: q_idx >= kv_idx\n  type:           bool\n")) << run.out;
  EXPECT_TRUE(has(run.out, "struct FlexjitModArgs {\n  FlexjitBuffer<float, 1> buf_slope;\n};\n")) << run.out;
  EXPECT_TRUE(has(run.out, "__device__ __forceinline__ float flexjit_score_mod(")) << run.out;
  EXPECT_TRUE(has(run.out, "__device__ __forceinline__ float flexjit_score_mod_grad(")) << run.out;
  EXPECT_TRUE(has(run.out, "__device__ __forceinline__ bool flexjit_mask_mod(")) << run.out;
}

TEST(CliCheck, ParamsAndSoftcapGradient) {
  const CheckRun run = check({"--score", "cap * tanh(score / cap)", "--param", "cap:float"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(has(run.out, "  params read:    cap (float)\n")) << run.out;
  EXPECT_TRUE(has(run.out, "  d/d(score):     cap * ((1.0 - tanh(score / cap) * tanh(score / cap)) * (1.0 / cap))\n"))
      << run.out;
}

TEST(CliCheck, ExplainsMistakesOnStderrWithExitCode2) {
  const CheckRun run = check({"--score", "scor * 2", "--mask", "q_idx => kv_id"});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "score_mod:1:1: unknown variable 'scor' (did you mean 'score'?)\n"
            "  scor * 2\n"
            "  ^~~~\n"
            "mask_mod:1:7: '=>' is not an operator; did you mean `q_idx >= kv_id`?\n"
            "  q_idx => kv_id\n"
            "        ^~\n"
            "mask_mod:1:10: unknown variable 'kv_id' (did you mean 'kv_idx'?)\n"
            "  q_idx => kv_id\n"
            "           ^~~~~\n");
}

TEST(CliCheck, NeedsAnExpression) {
  const CheckRun run = check({});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err, "error: give an expression to check: --score EXPR and/or --mask EXPR (e.g. --mask 'q_idx >= kv_idx')\n");
}

TEST(CliCheck, BadDeclarations) {
  const CheckRun run = check({"--mask", "doc[q_idx] == 0", "--buffer", "doc:i64:4096"});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err,
            "error: unknown dtype 'i64' in buffer declaration 'doc:i64:4096' (expected f16, bf16, f32, i32 or u8)\n");
  const CheckRun param = check({"--score", "score * w", "--param", "w:double"});
  EXPECT_EQ(param.code, 2);
  EXPECT_EQ(param.err, "error: unknown parameter type 'double' in 'w:double' (expected int or float)\n");
}

TEST(CliCheck, EmptyExpressionIsExplained) {
  const CheckRun run = check({"--mask", ""});
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.err,
            "mask_mod:1:1: the expression is empty\n"
            "  hint: a mask_mod that keeps every position is `true`; causal attention is `q_idx >= kv_idx`\n");
}

}  // namespace
}  // namespace flexjit::test
