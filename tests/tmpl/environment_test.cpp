// Environment, loaders, includes and concurrent rendering.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "test_util.hpp"

namespace flexjit::tmpl {
namespace {

using test::error_of;

std::shared_ptr<const Loader> files(std::map<std::string, std::string> templates) {
  return std::make_shared<MapLoader>(std::move(templates));
}

// Counts loads, to show that an Environment parses each template once.
class CountingLoader : public Loader {
 public:
  explicit CountingLoader(std::map<std::string, std::string> templates) : inner_(std::move(templates)) {}
  std::optional<std::string> load(const std::string& name) const override {
    ++loads;
    return inner_.load(name);
  }
  mutable std::atomic<int> loads{0};

 private:
  MapLoader inner_;
};

TEST(MapLoader, ServesItsTemplatesByName) {
  MapLoader loader({{"a.j2", "A"}, {"b.j2", "B"}});
  EXPECT_EQ(loader.load("a.j2"), "A");
  EXPECT_EQ(loader.load("c.j2"), std::nullopt);
  EXPECT_EQ(loader.names(), (std::vector<std::string>{"a.j2", "b.j2"}));
}

TEST(DirectoryLoader, ReadsFilesBelowItsRootOnly) {
  const auto root = std::filesystem::temp_directory_path() / ("flexjit_tmpl_loader_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "sub");
  std::ofstream(root / "top.j2") << "top {{ x }}";
  std::ofstream(root / "sub" / "inner.j2") << "inner";
  DirectoryLoader loader(root.string());
  EXPECT_EQ(loader.load("top.j2"), "top {{ x }}");
  EXPECT_EQ(loader.load("sub/inner.j2"), "inner");
  EXPECT_EQ(loader.load("missing.j2"), std::nullopt);
  EXPECT_EQ(loader.load("sub"), std::nullopt);  // a directory is not a template
  EXPECT_EQ(loader.load("../top.j2"), std::nullopt);
  EXPECT_EQ(loader.load("sub/../top.j2"), std::nullopt);
  EXPECT_EQ(loader.load((root / "top.j2").string()), std::nullopt);  // absolute
  auto names = loader.names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"sub/inner.j2", "top.j2"}));
  Environment env(std::make_shared<DirectoryLoader>(root.string()));
  EXPECT_EQ(env.render("top.j2", {{"x", 1}}), "top 1");
  std::filesystem::remove_all(root);
}

TEST(Environment, RendersByNameAndParsesOnce) {
  auto loader = std::make_shared<CountingLoader>(std::map<std::string, std::string>{
      {"main.j2", "{% for i in range(3) %}{% include 'part.j2' %}{% endfor %}"}, {"part.j2", "[{{ i }}]"}});
  Environment env(loader);
  EXPECT_EQ(env.render("main.j2", {}), "[0][1][2]");
  EXPECT_EQ(env.render("main.j2", {}), "[0][1][2]");
  EXPECT_EQ(loader->loads.load(), 2);
  const Template& first = env.get("main.j2");
  EXPECT_EQ(&first, &env.get("main.j2"));
  EXPECT_EQ(first.name(), "main.j2");
}

TEST(Environment, UsesItsOptionsForEveryTemplate) {
  Options options;
  options.trim_blocks = false;
  Environment env(files({{"a.j2", "{% if true %}\nx{% endif %}"}}), options);
  EXPECT_EQ(env.render("a.j2", {}), "\nx");
  EXPECT_FALSE(env.options().trim_blocks);
}

TEST(Environment, MissingTemplate) {
  Environment env(files({{"fwd.cu.j2", ""}}));
  EXPECT_EQ(error_of(env, "fwd.cuh.j2"), "fwd.cuh.j2:1:1: template 'fwd.cuh.j2' not found (did you mean 'fwd.cu.j2'?)");
  EXPECT_EQ(error_of(env, "zzz"), "zzz:1:1: template 'zzz' not found");
  EXPECT_EQ(env.find("zzz"), nullptr);
  Environment no_loader(nullptr);
  EXPECT_EQ(error_of(no_loader, "a.j2"), "a.j2:1:1: template 'a.j2' not found");
}

TEST(Environment, ParseErrorsNameTheTemplate) {
  Environment env(files({{"bad.j2", "ok\n{% if %}"}, {"main.j2", "{% include 'bad.j2' %}"}}));
  EXPECT_EQ(error_of(env, "bad.j2"), "bad.j2:2:7: expected an expression but found '%}'");
  EXPECT_EQ(error_of(env, "main.j2"), "bad.j2:2:7: expected an expression but found '%}'");
}

TEST(Include, SeesTheCurrentContextLoopVariablesAndMacros) {
  Environment env(files({
      {"main.j2",
       "{% macro shout(s) %}{{ s | upper }}{% endmacro %}{% set sep = ';' %}"
       "{% for name in names %}{% include 'item.j2' %}{% endfor %}"},
      {"item.j2", "{{ shout(name) }}{{ sep }}{{ suffix }}"},
  }));
  EXPECT_EQ(env.render("main.j2", {{"names", {"a", "b"}}, {"suffix", "!"}}), "A;!B;!");
}

TEST(Include, SetsAndMacrosInsideDoNotLeakOut) {
  Environment env(files({
      {"main.j2", "{% include 'defs.j2' %}{{ x | default('no x') }} {{ helper is defined }}"},
      {"defs.j2", "{% set x = 1 %}{% macro helper() %}{% endmacro %}"},
  }));
  EXPECT_EQ(env.render("main.j2", {}), "no x False");
}

TEST(Include, NameMayBeAnExpressionAndMissingMayBeIgnored) {
  Environment env(files({{"main.j2", "{% include kind ~ '.j2' %}|{% include 'nope.j2' ignore missing %}|"},
                         {"fwd.j2", "forward"}}));
  EXPECT_EQ(env.render("main.j2", {{"kind", "fwd"}}), "forward||");
}

TEST(Include, KeepsLinesWithTrailingNewlines) {
  Environment env(files({{"main.j2", "a\n{% include 'line.j2' %}\nc\n"}, {"line.j2", "b\n"}}));
  EXPECT_EQ(env.render("main.j2", {}), "a\nb\nc\n");
}

TEST(Include, NotFoundIsReportedAtTheIncludeTag) {
  Environment env(files({{"main.j2", "x\n  {% include 'commn.cuh' %}"}, {"common.cuh", ""}}));
  EXPECT_EQ(error_of(env, "main.j2"), "main.j2:2:6: template 'commn.cuh' not found (did you mean 'common.cuh'?)");
}

TEST(Include, ErrorsInsideNameTheIncludedTemplate) {
  Environment env(files({{"main.j2", "{% include 'part.j2' %}"}, {"part.j2", "\n\n  {{ missing_value }}"}}));
  EXPECT_EQ(error_of(env, "main.j2"), "part.j2:3:6: undefined variable 'missing_value'");
}

TEST(Include, MacroErrorsNameTheTemplateThatDefinesTheMacro) {
  Environment env(files({{"main.j2", "{% macro m() %}{{ 1 / 0 }}{% endmacro %}{% include 'part.j2' %}"},
                         {"part.j2", "{{ m() }}"}}));
  EXPECT_EQ(error_of(env, "main.j2"), "main.j2:1:21: division by zero");
}

TEST(Include, CyclesAreErrors) {
  Environment env(files({{"a.j2", "{% include 'b.j2' %}"}, {"b.j2", "\n{% include 'a.j2' %}"}, {"self.j2", "{% include 'self.j2' %}"}}));
  EXPECT_EQ(error_of(env, "a.j2"), "b.j2:2:4: include cycle: a.j2 -> b.j2 -> a.j2");
  EXPECT_EQ(error_of(env, "b.j2"), "a.j2:1:4: include cycle: b.j2 -> a.j2 -> b.j2");
  EXPECT_EQ(error_of(env, "self.j2"), "self.j2:1:4: include cycle: self.j2 -> self.j2");
}

TEST(Include, DepthIsCapped) {
  std::map<std::string, std::string> chain;
  for (int i = 0; i < 40; ++i) chain["t" + std::to_string(i)] = "{% include 't" + std::to_string(i + 1) + "' %}";
  chain["t40"] = "end";
  Environment env(files(chain));
  EXPECT_EQ(error_of(env, "t0"), "t32:1:4: includes are nested too deeply (more than 32 levels)");
  EXPECT_EQ(env.render("t10", {}), "end");  // 30 levels are fine
}

TEST(Include, TemplateRenderTakesAnEnvironment) {
  Environment env(files({{"part.j2", "P{{ x }}"}}));
  Template main = Template::parse("main", "<{% include 'part.j2' %}>");
  EXPECT_EQ(main.render({{"x", 1}}, &env), "<P1>");
}

// ---- threads ----

TEST(Threads, OneTemplateRendersFromManyThreads) {
  Template tmpl = Template::parse("t.j2",
                                  "{% macro row(i) %}{{ i }}:{{ values[i] * scale }}{% endmacro %}"
                                  "{% for i in range(values | length) %}{{ row(i) }}{% if not loop.last %},{% endif %}{% endfor %}");
  constexpr int kThreads = 8;
  std::vector<std::string> results(kThreads);
  std::vector<std::string> expected(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; ++t) {
    expected[static_cast<size_t>(t)] = "0:" + std::to_string(t) + ",1:" + std::to_string(2 * t) + ",2:" + std::to_string(3 * t);
    threads.emplace_back([&, t] {
      Json context = {{"values", {1, 2, 3}}, {"scale", t}};
      for (int iteration = 0; iteration < 300; ++iteration)
        if (tmpl.render(context) != expected[static_cast<size_t>(t)]) ++mismatches;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Threads, EnvironmentLoadsAndRendersFromManyThreads) {
  std::map<std::string, std::string> templates;
  for (int i = 0; i < 16; ++i)
    templates["t" + std::to_string(i)] = "{% include 'common' %}" + std::to_string(i) + "{{ x }}";
  templates["common"] = "c";
  Environment env(files(templates));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 200; ++iteration) {
        int i = (iteration + t) % 16;
        if (env.render("t" + std::to_string(i), {{"x", t}}) != "c" + std::to_string(i) + std::to_string(t)) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Threads, ErrorsFromManyThreadsDoNotInterfere) {
  Template tmpl = Template::parse("t.j2", "{{ 10 // d }}");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 200; ++iteration) {
        int d = (iteration + t) % 3;
        try {
          if (tmpl.render({{"d", d}}) != std::to_string(10 / std::max(d, 1)) || d == 0) ++wrong;
        } catch (const TemplateError& error) {
          if (d != 0 || std::string(error.what()) != "t.j2:1:7: division by zero") ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace flexjit::tmpl
