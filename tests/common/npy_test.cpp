// .npy reading and writing (src/common/npy.hpp): round trips of every dtype and edge-case shape,
// the exact bytes NumPy writes, format versions 2 and 3, and the error messages for files that
// cannot be read.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/npy.hpp"
#include "support/fuzz_seeds.hpp"
#include "flexjit/error.hpp"

namespace flexjit {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "flexjit-npy-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_bytes(const std::string& name, const std::string& bytes) const {
    test::save_fuzz_seed(bytes);
    std::ofstream out(path(name), std::ios::binary);
    out << bytes;
  }
  std::string read_bytes(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The UsageError text read_npy throws for `name`, or "" when it reads fine.
  std::string read_error(const std::string& name) const {
    try {
      read_npy(path(name));
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// A header the way NumPy writes it: dict text, padded with spaces so that the data starts at a
// multiple of 64, ended by '\n'. `major` 1 has a 2-byte length, 2 and 3 a 4-byte one.
std::string npy_file(const std::string& dict, int major, const std::string& data) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  const size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + header + data;
}

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

TEST_F(NpyTest, WritesWhatNumpyWrites) {
  // np.save("a.npy", np.arange(6, dtype=np.float32).reshape(2, 3)) produces exactly these bytes.
  const std::vector<float> values{0, 1, 2, 3, 4, 5};
  const std::string numpy = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1,
                                     float_bytes(values));
  ASSERT_EQ(numpy.size(), 128u + 24u);
  write_npy(path("a.npy"), NpyArray::from_doubles({0, 1, 2, 3, 4, 5}, DType::f32, {2, 3}));
  EXPECT_EQ(read_bytes("a.npy"), numpy);
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  const std::vector<double> values{0, 1, -2.5, 3.25, 100, -0.125, 7, 42, 0.5, -1, 2, 64};
  for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::u8}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    std::vector<double> exact = values;
    if (dtype == DType::u8 || dtype == DType::i32)
      for (double& v : exact) v = std::fabs(std::trunc(v));  // representable in every integer type
    const NpyArray written = NpyArray::from_doubles(exact, dtype, {3, 4});
    ASSERT_EQ(written.data.size(), exact.size() * dtype_size(dtype));
    write_npy(path("x.npy"), written);
    const NpyArray read = read_npy(path("x.npy"));
    EXPECT_EQ(read.dtype, dtype);
    EXPECT_EQ(read.shape, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(read.data, written.data);
    EXPECT_EQ(read.to_doubles(), exact);  // every value is exactly representable in every dtype
    EXPECT_EQ(read_bytes("x.npy").size() % 64, (exact.size() * dtype_size(dtype)) % 64);  // data 64-aligned
  }
}

TEST_F(NpyTest, DescriptorsOfEachDtype) {
  const std::pair<DType, const char*> cases[] = {{DType::f16, "'descr': '<f2'"},
                                                 {DType::bf16, "'descr': 'bfloat16'"},
                                                 {DType::f32, "'descr': '<f4'"},
                                                 {DType::i32, "'descr': '<i4'"},
                                                 {DType::u8, "'descr': '|u1'"}};
  for (const auto& [dtype, descr] : cases) {
    write_npy(path("d.npy"), NpyArray::from_doubles({1}, dtype, {1}));
    EXPECT_NE(read_bytes("d.npy").find(descr), std::string::npos) << descr;
  }
}

TEST_F(NpyTest, OneDimensionalAndScalarShapes) {
  write_npy(path("v.npy"), NpyArray::from_doubles({1, 2, 3}, DType::f32, {3}));
  EXPECT_NE(read_bytes("v.npy").find("'shape': (3,), }"), std::string::npos) << read_bytes("v.npy");
  NpyArray v = read_npy(path("v.npy"));
  EXPECT_EQ(v.shape, std::vector<int64_t>{3});
  EXPECT_EQ(v.to_doubles(), (std::vector<double>{1, 2, 3}));

  write_npy(path("s.npy"), NpyArray::from_doubles({2.5}, DType::f32, {}));
  EXPECT_NE(read_bytes("s.npy").find("'shape': (), }"), std::string::npos) << read_bytes("s.npy");
  NpyArray s = read_npy(path("s.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.to_doubles(), std::vector<double>{2.5});

  write_npy(path("e.npy"), NpyArray::from_doubles({}, DType::i32, {2, 0}));
  NpyArray e = read_npy(path("e.npy"));
  EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.data.empty());
}

TEST_F(NpyTest, ReadsFormatVersionsTwoAndThree) {
  const std::vector<float> values{1.5f, -2.f, 3.f, 4.f};
  for (int major : {2, 3}) {
    write_bytes("v.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", major,
                                  float_bytes(values)));
    const NpyArray a = read_npy(path("v.npy"));
    EXPECT_EQ(a.dtype, DType::f32) << major;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2})) << major;
    EXPECT_EQ(a.to_doubles(), (std::vector<double>{1.5, -2, 3, 4})) << major;
  }
}

TEST_F(NpyTest, ReadsNumpyVariantsOfTheHeader) {
  // Key order, spacing and the ml_dtypes bfloat16 descriptor '<V2' as other writers produce them.
  const std::string bf16_one("\x80\x3f\x00\x40", 4);  // 1.0, 2.0
  write_bytes("b.npy", npy_file("{'shape': (2,), 'fortran_order': False, 'descr': '<V2'}", 1, bf16_one));
  const NpyArray b = read_npy(path("b.npy"));
  EXPECT_EQ(b.dtype, DType::bf16);
  EXPECT_EQ(b.to_doubles(), (std::vector<double>{1, 2}));
  write_bytes("u.npy", npy_file("{'descr':'|u1','fortran_order':False,'shape':(3,)}", 1, std::string("\x01\x02\xff", 3)));
  const NpyArray u = read_npy(path("u.npy"));
  EXPECT_EQ(u.dtype, DType::u8);
  EXPECT_EQ(u.to_doubles(), (std::vector<double>{1, 2, 255}));
}

TEST_F(NpyTest, ConversionsRoundToNearestEven) {
  // 1 + 2^-8 is halfway between two bf16 values: ties to even (1.0); 1 + 3*2^-8 ties up.
  const NpyArray b = NpyArray::from_doubles({1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -8)}, DType::bf16, {2});
  EXPECT_EQ(b.to_doubles(), (std::vector<double>{1, 1 + std::ldexp(1, -6)}));
  const NpyArray h = NpyArray::from_doubles({1 + std::ldexp(1, -11), 70000}, DType::f16, {2});
  EXPECT_EQ(h.to_doubles()[0], 1.0);
  EXPECT_TRUE(std::isinf(h.to_doubles()[1]));
}

TEST_F(NpyTest, ErrorMessages) {
  const std::string p = path("bad.npy");
  write_bytes("bad.npy", "PK\x03\x04 this is a zip file, not an array");
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is not a .npy file (bad magic)");

  write_bytes("bad.npy", "\x93NUMPY");
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is not a .npy file (bad magic)");

  write_bytes("bad.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1, "abcd")
                             .replace(6, 1, std::string(1, '\x04')));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' has .npy format version 4 (supported: 1, 2, 3)");

  write_bytes("bad.npy", npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 1, "abcd"));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is big-endian ('>f4'); save it little-endian");

  // A NUL or control byte in the descr is shown escaped, not cutting the message short.
  write_bytes("bad.npy", npy_file(std::string("{'descr': '<f4") + '\0' + "\x01x', 'fortran_order': False, 'shape': (1,), }",
                                  1, "abcd"));
  EXPECT_EQ(read_error("bad.npy"),
            "'" + p + "' has element type '<f4\\x00\\x01x'; supported: float16, float32, int32, uint8, bfloat16 "
            "(convert with arr.astype(np.float32))");

  write_bytes("bad.npy", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 1, "abcdefgh"));
  EXPECT_EQ(read_error("bad.npy"),
            "'" + p + "' has element type '<f8'; supported: float16, float32, int32, uint8, bfloat16 "
                      "(convert with arr.astype(np.float32))");

  write_bytes("bad.npy", npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 1,
                                  std::string(16, '\0')));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is in Fortran order; save a C-ordered array (np.ascontiguousarray)");

  write_bytes("bad.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1,
                                  std::string(8, '\0')));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is truncated: 8 data bytes, the shape (2, 3) needs 24");

  write_bytes("bad.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1, "").substr(0, 40));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' is truncated (header)");

  write_bytes("bad.npy", npy_file("{'fortran_order': False, 'shape': (2, 3), }", 1, ""));
  EXPECT_EQ(read_error("bad.npy"), "'" + p + "' has no 'descr' in its header");

  EXPECT_EQ(read_error("missing.npy"), "cannot open '" + path("missing.npy") + "': no such file");
}

// Issue 17 item 1: the byte count of a shape is overflow-checked before it is compared with the
// data, so a tiny file declaring a huge shape is refused instead of wrapping to a small count.
TEST_F(NpyTest, ShapesWhoseSizeOverflowsAreRefused) {
  const std::string p = path("big.npy");
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4194304, 2097152, 2097152, 64), }",
                                  1, std::string(64, '\0')));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' declares shape (4194304, 2097152, 2097152, 64), more bytes than a "
                                   "64-bit size can count");
  write_bytes("big.npy", npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 1, ""));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' declares shape (4611686018427387904, 4), more bytes than a "
                                   "64-bit size can count");
  // Large but countable: an honest truncation message, not an allocation.
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", 1, ""));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' is truncated: 0 data bytes, the shape (1048576, 1048576) needs "
                                   "4398046511104");
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 1, ""));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' has a malformed header: it has the dimension 99999999999999999999 "
                                   "in 'shape', larger than 2^63-1 (header offset 51)");
  // A zero extent makes the array empty, but the other extents must still be countable: strides
  // and element counts are products of them in any order (found by fuzz_npy under UBSan).
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904), }", 1, ""));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' declares shape (0, 4611686018427387904), more bytes than a "
                                   "64-bit size can count");
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                  "(4194304, 22, 944, 20152, 97152, 0, 22, 943042, 97152, 64), }", 1, ""));
  EXPECT_EQ(read_error("big.npy"), "'" + p + "' declares shape (4194304, 22, 944, 20152, 97152, 0, 22, 943042, "
                                   "97152, 64), more bytes than a 64-bit size can count");
  write_bytes("big.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0, 1048576), }", 1, ""));
  EXPECT_EQ(read_npy(p).numel(), 0);
}

// Issue 17 item 2: a header is parsed by hand, not with std::regex (whose recursion overflowed
// the stack on 30,000 spaces); long padding is fine, a header over the bound is refused by size.
TEST_F(NpyTest, LongHeadersAreParsedOrRefusedBySize) {
  const std::string p = path("h.npy");
  write_bytes("h.npy", npy_file("{'descr': '<f4', 'fortran_order': False," + std::string(30000, ' ') + "'shape': (1,), }",
                                1, float_bytes({7})));
  EXPECT_EQ(read_npy(p).to_doubles(), std::vector<double>{7});
  write_bytes("h.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + std::string(200000, ' '),
                                2, float_bytes({7})));
  EXPECT_EQ(read_error("h.npy"), "'" + p + "' has a header of 200116 bytes; at most 65536 are accepted (NumPy "
                                 "writes under 10000)");
}

// Issue 17 item 8: a malformed header dict is named, never half-read ('1e12' was read as 1).
TEST_F(NpyTest, MalformedHeadersAreNamed) {
  const std::string p = path("m.npy");
  const std::pair<std::string, std::string> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1e12, 2, 64, 64), }",
       "it has the dimension '1e12' in 'shape'; dimensions are non-negative integers (header offset 51)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5, 2), }",
       "it has the dimension '1.5' in 'shape'; dimensions are non-negative integers (header offset 51)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (two, 2), }",
       "it has the dimension 'two' in 'shape'; dimensions are non-negative integers (header offset 51)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }",
       "it has the dimension '-1' in 'shape'; dimensions are non-negative integers (header offset 51)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1, 2], }",
       "it needs a tuple '(...)' as the value of 'shape' (header offset 50)"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
       "it needs True or False as the value of 'fortran_order' (header offset 34)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
       "it has the unknown key 'extra' (expected 'descr', 'fortran_order', 'shape') (header offset 56)"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
       "it repeats the key 'descr' (header offset 17)"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "it needs ',' or '}' after the value of 'descr' (header offset 16)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk",
       "it has text after the closing '}' of its dict (header offset 56)"},
      // The string runs to the next quote, so the dict goes wrong where 'fortran_order' starts.
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
       "it needs ',' or '}' after the value of 'descr' (header offset 17)"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", "it needs ':' after key 'descr' (header offset 9)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,",
       "it ends early; expected a dimension or ')' in 'shape' (header offset 54)"},
      {"'descr': '<f4'", "it needs the header dict to start with '{' (header offset 0)"},
  };
  for (const auto& [dict, why] : cases) {
    write_bytes("m.npy", npy_file(dict, 1, std::string(16, '\0')));
    EXPECT_EQ(read_error("m.npy"), "'" + p + "' has a malformed header: " + why) << dict;
  }
  write_bytes("m.npy", npy_file("{'descr': '<f4', 'shape': (1,)}", 1, "abcd"));
  EXPECT_EQ(read_error("m.npy"), "'" + p + "' has no 'fortran_order' in its header");
  write_bytes("m.npy", npy_file("{'descr': '<f4', 'fortran_order': False}", 1, "abcd"));
  EXPECT_EQ(read_error("m.npy"), "'" + p + "' has no 'shape' in its header");
}

// Issue 17 item 13: a path that is not a regular file is named, not read (a FIFO would block).
TEST_F(NpyTest, NonRegularFilesAreRefusedByKind) {
  EXPECT_EQ(read_error("."), "'" + path(".") + "' is a directory; expected a .npy file");
  ASSERT_EQ(::mkfifo(path("pipe.npy").c_str(), 0600), 0);
  EXPECT_EQ(read_error("pipe.npy"), "'" + path("pipe.npy") + "' is a FIFO (named pipe); expected a .npy file");
  fs::create_symlink("/dev/zero", path("zero.npy"));
  EXPECT_EQ(read_error("zero.npy"), "'" + path("zero.npy") + "' is a character device; expected a .npy file");
}

TEST_F(NpyTest, WriteErrorNamesThePath) {
  const std::string target = path("no-such-dir/out.npy");
  try {
    write_npy(target, NpyArray::from_doubles({1}, DType::f32, {1}));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + target + "'");
  }
}

}  // namespace
}  // namespace flexjit
