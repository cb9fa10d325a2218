// Golden files: every tests/tmpl/golden/<case>.j2 is rendered with <case>.json as its context,
// through an Environment rooted at golden/ (so cases can include golden/include/*), and must
// equal <case>.out byte for byte. The .out files were produced by Jinja 3.1 with the same flags
// (golden/crosscheck_jinja.py), so they also pin down that this engine renders like Jinja.
//
// FLEXJIT_UPDATE_GOLDEN=1 rewrites the .out files from this engine instead of comparing; review
// the diff (and run crosscheck_jinja.py) before committing it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tmpl/template.hpp"

namespace flexjit::tmpl {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(FLEXJIT_TEST_DIR) / "tmpl" / "golden"; }

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// "<case>" for each "<case>.j2" directly in golden/ (templates under include/ are only included).
std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(golden_dir(), error)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_regular_file() && file.size() > 3 && file.substr(file.size() - 3) == ".j2")
      cases.push_back(file.substr(0, file.size() - 3));
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

// Makes whitespace visible in a failure message.
std::string show(const std::string& line) {
  std::string out;
  for (char c : line) out += c == '\t' ? "\\t" : c == '\r' ? "\\r" : std::string(1, c);
  return "\"" + out + "\"";
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  if (!text.empty() && text.back() == '\n') lines.push_back("");  // a final newline is a difference too
  return lines;
}

// The first differing line, both versions, and the whole actual output.
std::string describe_difference(const std::string& expected, const std::string& actual) {
  const auto want = split_lines(expected), got = split_lines(actual);
  size_t line = 0;
  while (line < want.size() && line < got.size() && want[line] == got[line]) ++line;
  std::ostringstream out;
  out << "first difference at line " << line + 1 << ":\n"
      << "  expected: " << (line < want.size() ? show(want[line]) : "<end of output>") << "\n"
      << "  actual:   " << (line < got.size() ? show(got[line]) : "<end of output>") << "\n"
      << "(expected " << want.size() << " lines, got " << got.size() << ")\n"
      << "---- actual output ----\n" << actual << "\n---- end ----";
  return out.str();
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, RendersExactly) {
  const std::string name = GetParam();
  const fs::path base = golden_dir() / name;
  ASSERT_TRUE(fs::exists(base.string() + ".json")) << "missing context " << base << ".json";
  const Json context = Json::parse(read_file(base.string() + ".json"));
  Environment env(std::make_shared<DirectoryLoader>(golden_dir().string()));
  const std::string actual = env.render(name + ".j2", context);
  const std::string out_path = base.string() + ".out";
  if (const char* update = std::getenv("FLEXJIT_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(out_path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(out_path)) << "missing expected output " << out_path;
  const std::string expected = read_file(out_path);
  EXPECT_TRUE(actual == expected) << name << ".j2 renders differently from " << name << ".out\n"
                                  << describe_difference(expected, actual);
}

std::string case_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string out = info.param;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(golden_cases()), case_test_name);

TEST(GoldenSuite, HasTheExpectedCases) {
  const auto cases = golden_cases();
  EXPECT_GE(cases.size(), 12u);
  EXPECT_NE(std::find(cases.begin(), cases.end(), "attention_fwd.cu"), cases.end());
}

}  // namespace
}  // namespace flexjit::tmpl
