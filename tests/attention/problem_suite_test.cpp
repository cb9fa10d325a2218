// Suite files (flexjit bench / tune --suite): hostile JSON is refused with a message naming the
// file, the problem and the field, before any arithmetic or narrowing could go wrong (a length
// that wraps to another length, a bound whose span overflows, a float that becomes inf), and only
// regular files are read (a FIFO would block the reader forever).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "flexjit/error.hpp"
#include "flexjit/problem_suite.hpp"
#include "support/scoped.hpp"

namespace flexjit {
namespace {

// A one-problem suite: `fields` are appended to a valid decode problem's.
std::string suite(const std::string& fields, const std::string& base = R"("name":"p","B":1,"Hq":2,"Sq":128,"D":64)") {
  return R"({"problems":[{)" + base + (fields.empty() ? "" : "," + fields) + "}]}";
}

std::string error_of(const std::string& text, const std::string& origin = "s.json") {
  try {
    parse_suite(text, origin);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string load_error(const std::string& path) {
  try {
    load_suite(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// A buffer "c" of the given spec.
std::string buffer(const std::string& spec) { return suite(R"("buffers":{"c":{)" + spec + "}}"); }

// Outside decoding "seq_lens" makes a ragged batch: each sequence's queries and keys, so Sq = Skv.
TEST(ProblemSuiteSeqLens, ARaggedForwardProblemNeedsEqualPaddedLengths) {
  const std::vector<SuiteProblem> ragged = parse_suite(suite(R"("B":3,"seq_lens":{"values":[128,1,0]})",
                                                             R"("name":"p","Hq":2,"Sq":128,"Skv":128,"D":64)"),
                                                       "s.json");
  ASSERT_EQ(ragged.size(), 1u);
  EXPECT_FALSE(ragged[0].decode);
  EXPECT_EQ(ragged[0].seq_lens, (std::vector<int32_t>{128, 1, 0}));
  EXPECT_EQ(error_of(suite(R"("seq_lens":{"values":[100]})", R"("name":"p","B":1,"Hq":2,"Sq":64,"Skv":128,"D":64)")),
            "s.json: problem 'p': \"seq_lens\" of a forward / backward problem gives each sequence's query and key "
            "length, so it needs Sq = Skv (got 64 and 128)");
}

TEST(ProblemSuiteSeqLens, UniformBoundsAreCheckedBeforeTheSpanIsComputed) {
  // hi - lo + 1 overflowed int64, and the drawn length was one the file never gave.
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[0,9223372036854775807]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [0, 9223372036854775807] must satisfy "
            "0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[9223372036854775807,9223372036854775807]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [9223372036854775807, 9223372036854775807] must "
            "satisfy 0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[-9223372036854775808,9223372036854775807]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [-9223372036854775808, 9223372036854775807] must "
            "satisfy 0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[0,18446744073709551615]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [0, 18446744073709551615] must satisfy "
            "0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[-1,5]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [-1, 5] must satisfy 0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[6,5]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [6, 5] must satisfy 0 <= lo <= hi <= Skv = 128");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"uniform":[0,129]})")),
            "s.json: problem 'p': \"seq_lens\" uniform bounds [0, 129] must satisfy 0 <= lo <= hi <= Skv = 128");
}

TEST(ProblemSuiteSeqLens, UniformDrawsAsPeersPy) {
  // lo + ((i + 1) * 2654435761 mod 2^32) mod (hi - lo + 1): 2654435761 % 10 = 1,
  // 5308871522 - 2^32 = 1013904226 -> 6, 7963307283 - 2^32 = 3668339987 -> 7.
  auto problems = parse_suite(suite(R"("kind":"decode","seq_lens":{"uniform":[0,9]})",
                                    R"("name":"p","B":3,"Hq":2,"Sq":1,"Skv":16,"D":64)"),
                              "s.json");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].seq_lens, (std::vector<int32_t>{1, 6, 7}));
  // Bounds at the ends of [0, Skv] are allowed.
  problems = parse_suite(suite(R"("kind":"decode","seq_lens":{"uniform":[128,128]})"), "s.json");
  EXPECT_EQ(problems[0].seq_lens, (std::vector<int32_t>{128}));
}

TEST(ProblemSuiteSeqLens, ValuesAreRangeCheckedBeforeNarrowing) {
  // 4294967297 became 1 as an int32.
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[4294967297]})")),
            "s.json: problem 'p': seq_lens[0] = 4294967297 is outside [0, Skv = 128]");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[18446744073709551615]})")),
            "s.json: problem 'p': seq_lens[0] = 18446744073709551615 is outside [0, Skv = 128]");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[-9223372036854775808]})")),
            "s.json: problem 'p': seq_lens[0] = -9223372036854775808 is outside [0, Skv = 128]");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[-1]})")),
            "s.json: problem 'p': seq_lens[0] = -1 is outside [0, Skv = 128]");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[1.5]})")),
            "s.json: problem 'p': \"seq_lens\" values must be integers, got 1.5");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","seq_lens":{"values":[1, 2]})")),
            "s.json: problem 'p': \"seq_lens\" gives 2 lengths for B = 1");
  const auto problems = parse_suite(suite(R"("kind":"decode","seq_lens":{"values":[0]})"), "s.json");
  EXPECT_EQ(problems[0].seq_lens, (std::vector<int32_t>{0}));
}

TEST(ProblemSuiteJson, NumberOverflowNamesTheFileProblemAndPlace) {
  // nlohmann's out_of_range.406 escaped as "[json.exception.out_of_range.406] number overflow
  // parsing '1e999'", naming neither the file nor the problem.
  EXPECT_EQ(error_of(R"({"problems":[{"name":"p","B":1,"Hq":2,"Sq":128,"D":64,"buffers":{"c":{"const":[1e999]}}}]})",
                     "big.json"),
            "big.json: problem 'p': not valid JSON: [json.exception.out_of_range.406] number overflow parsing "
            "'1e999' at line 1, column 80");
  // Before the problem's name: its index; on a later line: that line.
  EXPECT_EQ(error_of("{\"problems\": [\n  {\"name\": \"a\", \"B\": 1, \"Hq\": 1, \"Sq\": 1, \"D\": 64},\n"
                     "  {\"B\": -1e400,\n   \"name\": \"b\"}\n]}",
                     "big.json"),
            "big.json: problem 1: not valid JSON: [json.exception.out_of_range.406] number overflow parsing "
            "'-1e400' at line 3, column 9");
  // Outside the problems array: just the file.
  EXPECT_EQ(error_of(R"({"about": 1e999, "problems": []})", "big.json"),
            "big.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999' at line 1, "
            "column 11");
  // Syntax errors keep nlohmann's own position.
  EXPECT_EQ(error_of(R"({"problems": [ {)", "bad.json"),
            "bad.json: not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 17: syntax error "
            "while parsing object key - unexpected end of input; expected string literal");
}

TEST(ProblemSuiteShape, ExtentsAreRangeChecked) {
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":2147483648,"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" = 2147483648 is too large; the limit is 2^30 = 1073741824");
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":18446744073709551615,"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" = 18446744073709551615 is too large; the limit is 2^30 = 1073741824");
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":-9223372036854775808,"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" must be a positive integer, got -9223372036854775808");
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":1.5,"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" must be a positive integer, got 1.5");
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":1,"Hq":2,"Sq":128,"D":4294967360)")),
            "s.json: problem 'p': \"D\" = 4294967360 is too large; the limit is 2^30 = 1073741824");
  EXPECT_EQ(error_of(suite(R"("kind":"decode","page_size":4294967297)")),
            "s.json: problem 'p': \"page_size\" = 4294967297 is too large; the limit is 2^30 = 1073741824");
  EXPECT_EQ(error_of(suite(R"("Skv":1073741825)")),
            "s.json: problem 'p': \"Skv\" = 1073741825 is too large; the limit is 2^30 = 1073741824");
  // A container is described, not dumped (a deep one would make dump() recurse without bound).
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":[[[1]]],"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" must be a positive integer, got an array");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":)" + deep + R"(,"Hq":2,"Sq":128,"D":64)")),
            "s.json: problem 'p': \"B\" must be a positive integer, got an array");
}

TEST(ProblemSuiteShape, TensorsMustBeAddressable) {
  // 2^30 * 2^30 * 2^30 * 2^30 elements of 2 bytes: the tools' size products would wrap; K below is
  // 2^10 * 2^10 * 2^30 * 2^14 * 2 = 2^65 bytes.
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":1073741824,"Hq":1073741824,"Sq":1073741824,"D":1073741824)")),
            "s.json: problem 'p': Q [B, Hq, Sq, D] = [1073741824, 1073741824, 1073741824, 1073741824] has more "
            "bytes than a 64-bit index can address; make the problem smaller");
  EXPECT_EQ(error_of(suite(R"("Skv":1073741824,"Hkv":1024)", R"("name":"p","B":1024,"Hq":1024,"Sq":1,"D":16384)")),
            "s.json: problem 'p': K [B, Hkv, Skv, D] = [1024, 1024, 1073741824, 16384] has more bytes than a 64-bit "
            "index can address; make the problem smaller");
  // 2^30 * 2^30 * 2 bytes = 2^61 fits.
  EXPECT_EQ(error_of(suite("", R"("name":"p","B":1,"Hq":1,"Sq":1073741824,"D":1073741824)")), "(no error)");
}

TEST(ProblemSuiteBuffers, ConstValuesMustFitTheDType) {
  // 1e300 became inf as an f32.
  EXPECT_EQ(error_of(buffer(R"("const":[1, 1e300])")),
            "s.json: problem 'p', buffer 'c': \"const\"[1] = 1e+300 does not fit in f32 (|x| <= 3.4028235e+38)");
  EXPECT_EQ(error_of(buffer(R"("const":[-3.5e38])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = -3.5e+38 does not fit in f32 (|x| <= 3.4028235e+38)");
  EXPECT_EQ(error_of(buffer(R"("dtype":"f16","const":[65505])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = 65505 does not fit in f16 (|x| <= 65504)");
  EXPECT_EQ(error_of(buffer(R"("dtype":"bf16","const":[3.4e38])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = 3.4e+38 does not fit in bf16 (|x| <= 3.3895314e+38)");
  // 4294967297 wrapped to 1 as an i32; 1.5 was truncated.
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","const":[4294967297])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = 4294967297 does not fit in i32 (whole numbers in "
            "[-2147483648, 2147483647])");
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","const":[1.5])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = 1.5 does not fit in i32 (whole numbers in "
            "[-2147483648, 2147483647])");
  EXPECT_EQ(error_of(buffer(R"("dtype":"u8","const":[256])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = 256 does not fit in u8 (whole numbers in [0, 255])");
  EXPECT_EQ(error_of(buffer(R"("dtype":"u8","const":[-1])")),
            "s.json: problem 'p', buffer 'c': \"const\"[0] = -1 does not fit in u8 (whole numbers in [0, 255])");
  EXPECT_EQ(error_of(buffer(R"("const":[])")),
            "s.json: problem 'p', buffer 'c': \"const\" must be a non-empty array of numbers, got []");
  EXPECT_EQ(error_of(buffer(R"("const":7)")),
            "s.json: problem 'p', buffer 'c': \"const\" must be a non-empty array of numbers, got 7");
  EXPECT_EQ(error_of(buffer(R"("const":[")" + std::string(70, 'x') + R"("])")),
            "s.json: problem 'p', buffer 'c': \"const\" must list numbers, got \"" + std::string(59, 'x') + "...");
  EXPECT_EQ(error_of(buffer(R"("const":["1"])")),
            "s.json: problem 'p', buffer 'c': \"const\" must list numbers, got \"1\"");
  // The ends of each range are allowed.
  const auto problems = parse_suite(
      suite(R"("buffers":{"a":{"const":[3.4028234663852886e38,-3.4028234663852886e38]},"b":{"dtype":"f16","const":[65504]},)"
            R"("i":{"dtype":"i32","const":[-2147483648,2147483647,3.0]},"u":{"dtype":"u8","const":[0,255]}})"),
      "s.json");
  ASSERT_EQ(problems[0].buffers.size(), 4u);
  EXPECT_EQ(problems[0].buffers[2].constant, (std::vector<double>{-2147483648.0, 2147483647.0, 3.0}));
}

TEST(ProblemSuiteBuffers, SegmentsAreRangeChecked) {
  // 3000000000 wrapped to a negative int32 length.
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","segments":[3000000000])")),
            "s.json: problem 'p', buffer 'c': \"segments\" add up to more than 2^30 = 1073741824 elements "
            "(segments[0] = 3000000000 passes it); give shorter documents");
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","segments":[1000000000,100000000])")),
            "s.json: problem 'p', buffer 'c': \"segments\" add up to more than 2^30 = 1073741824 elements "
            "(segments[1] = 100000000 passes it); give shorter documents");
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","segments":[0])")),
            "s.json: problem 'p', buffer 'c': \"segments\" must list positive document lengths, got 0");
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","segments":5)")),
            "s.json: problem 'p', buffer 'c': \"segments\" must be a non-empty array of positive document lengths, "
            "got 5");
  // Document ids 0 .. 256 do not all fit in a u8.
  std::string docs = "1";
  for (int i = 1; i < 257; ++i) docs += ",1";
  EXPECT_EQ(error_of(buffer(R"("dtype":"u8","segments":[)" + docs + "]")),
            "s.json: problem 'p', buffer 'c': 257 segments number their documents up to 256, which u8 cannot hold "
            "exactly (at most 255); use dtype \"i32\"");
  const auto problems = parse_suite(buffer(R"("dtype":"i32","segments":[2,1])"), "s.json");
  EXPECT_EQ(problems[0].buffers[0].values(), (std::vector<double>{0, 0, 1}));
}

TEST(ProblemSuiteBuffers, RandnAndAlibiAreRangeChecked) {
  // The element count 2^96 overflowed int64.
  EXPECT_EQ(error_of(buffer(R"("randn":[4294967296,4294967296,4294967296])")),
            "s.json: problem 'p', buffer 'c': \"randn\" shape [4294967296,4294967296,4294967296] has more than "
            "2^30 = 1073741824 elements");
  EXPECT_EQ(error_of(buffer(R"("randn":[32768,32769])")),
            "s.json: problem 'p', buffer 'c': \"randn\" shape [32768,32769] has more than 2^30 = 1073741824 elements");
  EXPECT_EQ(error_of(buffer(R"("randn":[4294967296,[[1]]])")),
            "s.json: problem 'p', buffer 'c': \"randn\" must list positive extents, got an array");
  EXPECT_EQ(error_of(buffer(R"("randn":[1,1,1,1,1,1,1,1,1])")),
            "s.json: problem 'p', buffer 'c': \"randn\" has 9 extents; the largest supported rank is 8");
  EXPECT_EQ(error_of(buffer(R"("randn":[18446744073709551615])")),
            "s.json: problem 'p', buffer 'c': \"randn\" shape [18446744073709551615] has more than 2^30 = 1073741824 "
            "elements");
  EXPECT_EQ(error_of(buffer(R"("dtype":"u8","randn":[4])")),
            "s.json: problem 'p', buffer 'c': \"randn\" makes normal floats, which u8 cannot hold; use dtype "
            "\"f32\", \"f16\" or \"bf16\"");
  EXPECT_EQ(error_of(buffer(R"("dtype":"i32","alibi_heads":4)")),
            "s.json: problem 'p', buffer 'c': \"alibi_heads\" makes slopes in (0, 1), which i32 would truncate to 0; "
            "use dtype \"f32\", \"f16\" or \"bf16\"");
  EXPECT_EQ(error_of(buffer(R"("alibi_heads":4294967297)")),
            "s.json: problem 'p', buffer 'c': \"alibi_heads\" = 4294967297 is too large; the limit is 2^30 = 1073741824");
  EXPECT_EQ(error_of(buffer(R"("const":[1],"randn":[2])")),
            "s.json: problem 'p', buffer 'c': give exactly one of \"segments\", \"alibi_heads\", \"randn\", \"const\"");
  const auto problems = parse_suite(buffer(R"("randn":[32768,32768])"), "s.json");
  EXPECT_EQ(problems[0].buffers[0].shape(), (std::vector<int64_t>{32768, 32768}));
}

TEST(ProblemSuiteFiles, OnlyRegularFilesAreRead) {
  test::TempDir dir;
  // A FIFO hung the reader (no writer ever comes); a directory read as empty text.
  const std::string fifo = (dir.path() / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(load_error(fifo), "suite file '" + fifo + "' is a FIFO (named pipe); expected a JSON file (see bench/suite.json)");
  EXPECT_EQ(load_error(dir.str()), "suite file '" + dir.str() + "' is a directory; expected a JSON file (see bench/suite.json)");
  const std::string missing = (dir.path() / "missing.json").string();
  EXPECT_EQ(load_error(missing), "cannot read suite file '" + missing + "': no such file");
  // A regular file (and a link to one) is read, and messages name it.
  const std::string good = (dir.path() / "good.json").string();
  test::write_text(good, suite(R"("kind":"decode","seq_lens":{"values":[5]})"));
  const auto problems = load_suite(good);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].name, "p");
  EXPECT_EQ(problems[0].seq_lens, (std::vector<int32_t>{5}));
  const std::string link = (dir.path() / "link.json").string();
  ASSERT_EQ(::symlink(good.c_str(), link.c_str()), 0);
  EXPECT_EQ(load_suite(link).size(), 1u);
  const std::string bad = (dir.path() / "bad.json").string();
  test::write_text(bad, suite(R"("kind":"decode","seq_lens":{"values":[4294967297]})"));
  EXPECT_EQ(load_error(bad), bad + ": problem 'p': seq_lens[0] = 4294967297 is outside [0, Skv = 128]");
}

TEST(ProblemSuiteFiles, TheStandardSuiteParses) {
  const auto problems = load_suite(FLEXJIT_SOURCE_DIR "/bench/suite.json");
  EXPECT_GT(problems.size(), 10u);
}

// Every suite the repository ships (bench/*.json: head dims, GQA groups, MLA, tails, combined
// mods...) loads, so a `bench --suite` a note names never fails on its file.
TEST(ProblemSuiteFiles, EveryShippedSuiteParses) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(FLEXJIT_SOURCE_DIR "/bench"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 7u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    size_t count = 0;
    EXPECT_NO_THROW(count = load_suite(file).size());
    EXPECT_GE(count, 1u);
  }
}

}  // namespace
}  // namespace flexjit
