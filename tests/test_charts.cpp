// Charts of benchmarks and tuned trees: the layout draws what the numbers say, bench and tree
// JSON map onto the right series, and `bench --plot` / `medusa plot` write whole PNG and SVG files.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <fstream>
#include <limits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench_charts.h"
#include "bench_mode.h"
#include "chart_file.h"
#include "chart_layout.h"
#include "decode/decoding_kinds.h"
#include "cli_runner.h"
#include "cli_rusage.h"
#include "model/model_file.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::charts;
using medusa::test::run_medusa;
using medusa::test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Every character 7 px wide: enough to place labels without a font.
const TextWidth kFixedWidth = [](const std::string& s, Shape::Font) { return 7.0f * float(s.size()); };

std::vector<Shape> bars_of(const std::vector<Shape>& shapes, uint32_t color) {
    std::vector<Shape> bars;
    for (const auto& s : shapes)
        if (s.kind == Shape::Kind::Rect && s.color == color) bars.push_back(s);
    return bars;
}

uint32_t be32(const std::string& s, size_t at) {
    return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 | uint32_t(uint8_t(s[at + 2])) << 8 |
           uint8_t(s[at + 3]);
}

}  // namespace

TEST_CASE("axis ticks are 1-2-5 steps from zero that reach the largest value", "[charts]") {
    for (double max : {0.7, 3.0, 9.99, 1153.0 * 1.08, 48213.0}) {
        const auto t = nice_ticks(max, 4);
        REQUIRE(t.size() >= 2);
        CHECK(t.front() == 0);
        CHECK(t.back() >= max);
        const double step = t[1] - t[0];
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
        CHECK((std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 2.5) < 1e-9 ||
               std::abs(mantissa - 5) < 1e-9));
        CHECK(t.size() <= 9);
    }
}

TEST_CASE("bar heights are proportional to the values and share one baseline", "[charts]") {
    Chart c;
    c.title = "speed";
    c.labels = {"a", "b", "c"};
    c.series = {{"s", {100, 200, 50}}};
    const auto bars = bars_of(layout_chart(c, 0, 0, 400, 300, ChartTheme{}, kFixedWidth), series_color(0));
    REQUIRE(bars.size() == 3);
    const float h0 = bars[0].b.y - bars[0].a.y, h1 = bars[1].b.y - bars[1].a.y, h2 = bars[2].b.y - bars[2].a.y;
    CHECK(h1 / h0 == Approx(2.0).epsilon(1e-4));
    CHECK(h2 / h0 == Approx(0.5).epsilon(1e-4));
    CHECK(bars[0].b.y == bars[1].b.y);
    CHECK(bars[0].a.x < bars[1].a.x);
    CHECK(bars[1].b.x < bars[2].a.x);
    // Everything inside the box.
    for (const auto& s : layout_chart(c, 0, 0, 400, 300, ChartTheme{}, kFixedWidth)) {
        CHECK(s.a.x >= 0);
        CHECK(s.a.y >= 0);
        CHECK(s.a.x <= 400);
        CHECK(s.a.y <= 300);
    }
}

TEST_CASE("a line chart on a log axis spaces 1, 2, 4, 8 evenly and marks the highlighted point", "[charts]") {
    Chart c;
    c.kind = Chart::Kind::Lines;
    c.log_x = true;
    c.x = {1, 2, 4, 8};
    c.labels = {"1", "2", "4", "8"};
    c.series = {{"v", {1, 2, 3, 4}}};
    c.highlight = 2;
    const ChartTheme theme;
    std::vector<float> xs;
    int highlighted = 0;
    for (const auto& s : layout_chart(c, 0, 0, 500, 300, theme, kFixedWidth)) {
        if (s.kind == Shape::Kind::Marker && s.color == series_color(0)) xs.push_back(s.a.x);
        if (s.kind == Shape::Kind::Marker && s.color == theme.reference) ++highlighted;
    }
    REQUIRE(xs.size() == 4);
    CHECK(xs[2] - xs[1] == Approx(xs[1] - xs[0]).epsilon(1e-4));
    CHECK(xs[3] - xs[2] == Approx(xs[1] - xs[0]).epsilon(1e-4));
    CHECK(highlighted == 1);
}

TEST_CASE("bench JSON: modes in a fixed order, each prompt set a series, plain decoding as the reference", "[charts]") {
    json bench;
    bench["compare"]["runs"] = 3;
    bench["compare"]["new_tokens_per_prompt"] = 64;
    bench["compare"]["prompt_sets"]["stories"] = {{"ngram", {{"tokens_per_s", 700.0}, {"tau", 1.2}}},
                                                  {"ar", {{"tokens_per_s", 1000.0}, {"tau", 1.0}}},
                                                  {"medusa", {{"tokens_per_s", 1500.0}, {"tau", 2.9}}}};
    bench["compare"]["prompt_sets"]["retell"] = {{"ar", {{"tokens_per_s", 900.0}, {"tau", 1.0}}},
                                                 {"ngram", {{"tokens_per_s", 1300.0}, {"tau", 2.2}}}};
    bench["vulkan"]["verify_latency_ms"] = {{{"tokens", 1}, {"ms", 0.5}}, {{"tokens", 8}, {"ms", 0.75}}};
    const auto charts = charts_from_json(bench, "bench.json");
    REQUIRE(charts.size() == 3);
    const Chart& speed = charts[0];
    CHECK(speed.labels == std::vector<std::string>{"plain", "Medusa", "n-gram"});
    REQUIRE(speed.series.size() == 2);
    CHECK(speed.series[0].name == "stories prompts");
    CHECK(speed.series[0].values == std::vector<double>{1000, 1500, 700});
    CHECK(speed.series[1].values[0] == 900);
    CHECK(std::isnan(speed.series[1].values[1]));  // retell ran no Medusa
    CHECK(speed.reference == 1000);
    CHECK(charts[1].series[0].values == std::vector<double>{1.0, 2.9, 1.2});
    CHECK(charts[2].series[0].values == std::vector<double>{1.0, 1.5});
    CHECK(mode_label("draft-tree:stories260K_q80.bin") == "draft tree q80");
    CHECK_THROWS_WITH(charts_from_json(json{{"hello", 1}}, "x.json"), Catch::Contains("x.json"));
}

TEST_CASE("bench mode labels are the drafters' words, one per folder or file", "[charts]") {
    for (const DrafterNames& n : kDrafterNames) {
        CHECK(mode_label(n.name) == n.word);
        CHECK(parse_drafter_kind(n.name) == n.kind);
        CHECK(drafter_word(n.kind) == std::string(n.word));
    }
    CHECK(mode_label("eagle:eagle3") == "EAGLE eagle3");  // EAGLE-2 beside EAGLE-3
    CHECK(mode_label("draft:stories260K_q80.bin") == "draft q80");
    CHECK(mode_label("speculate") == "speculate");
}

TEST_CASE("bench files of either spelling of plain decoding chart alike", "[charts]") {
    for (const char* plain : {"plain", "ar"}) {
        CAPTURE(plain);
        json bench;
        bench["compare"]["prompt_sets"]["stories"] = {{"eagle", {{"tokens_per_s", 2000.0}}},
                                                      {"draft-tree:stories260K_q80.bin", {{"tokens_per_s", 900.0}}},
                                                      {"draft:stories260K_q80.bin", {{"tokens_per_s", 800.0}}},
                                                      {plain, {{"tokens_per_s", 1000.0}}}};
        const Chart speed = charts_from_json(bench, "bench.json")[0];
        CHECK(speed.labels == std::vector<std::string>{"plain", "EAGLE", "draft q80", "draft tree q80"});
        CHECK(speed.reference == 1000);
    }
}

TEST_CASE("bench mode keys read back as the modes written, and as before", "[charts]") {
    const BenchMode tree{.kind = DrafterKind::DraftModel, .tree = true, .variant = "stories260K_q80.bin"};
    CHECK(bench_mode_key(tree) == "draft-tree:stories260K_q80.bin");
    CHECK(parse_bench_mode_key(bench_mode_key(tree)) == tree);
    for (const DrafterNames& n : kDrafterNames) CHECK(parse_bench_mode_key(bench_mode_key({.kind = n.kind}))->kind == n.kind);
    CHECK(bench_mode_key(*parse_bench_mode_key("ar")) == "plain");
    CHECK(parse_bench_mode_key("eagle:eagle3")->variant == "eagle3");
    for (const char* odd : {"", "fast", "eagle:", ":x", "plainly"}) CHECK_FALSE(parse_bench_mode_key(odd));
}

TEST_CASE("tree JSON: one point per budget, the chosen budget marked", "[charts]") {
    json tree = {{"nodes", 3}, {"medusa_choices", json::array()}, {"table", json::array()}};
    for (int n = 1; n <= 4; ++n)
        tree["table"].push_back({{"nodes", n}, {"expected_tokens_per_step", 1 + 0.5 * n}, {"step_ms", 1.0 + n},
                                 {"expected_tokens_per_s", (1 + 0.5 * n) * 1000 / (1.0 + n)}});
    const auto charts = charts_from_json(tree, "tree.json");
    REQUIRE(charts.size() == 3);
    for (const auto& c : charts) {
        CHECK(c.highlight == 2);
        CHECK(c.labels.size() == 4);
    }
    CHECK(charts[0].series[0].values[2] == Approx(2.5 * 1000 / 4.0));
}

TEST_CASE("charts files: whole PNG and SVG, and errors that name the path", "[charts]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_charts_" + std::to_string(getpid()));
    fs::create_directories(dir);
    Chart c;
    c.title = "t";
    c.labels = {"a", "b"};
    c.series = {{"s", {1, 2}}};
    const std::string png = (dir / "c.png").string(), svg = (dir / "c.svg").string();
    write_charts({c, c, c}, "heading", png);
    const std::string bytes = slurp(png);
    REQUIRE(bytes.size() > 24);
    CHECK(bytes.compare(1, 3, "PNG") == 0);
    CHECK(be32(bytes, 16) == 1120);  // two columns of 560 px
    CHECK(be32(bytes, 20) == 34 + 2 * 340);
    write_charts({c}, "heading", svg);
    CHECK(slurp(svg).find("<svg") != std::string::npos);
    CHECK_THROWS_WITH(write_charts({c}, "h", (dir / "c.jpg").string()), Catch::Contains("c.jpg"));
    CHECK_THROWS_WITH(write_charts({c}, "h", (dir / "missing" / "c.png").string()), Catch::Contains("missing/c.png"));
    // Nothing half-written is left behind.
    for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("medusa bench --plot and medusa plot draw a real benchmark", "[cli][charts]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_bench_plot_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string json_path = (dir / "b.json").string(), png = (dir / "b.png").string(), svg = (dir / "b.svg").string();
    const auto r = run_medusa("bench -m " + medusa::test::model_path("stories260K.bin") +
                              " --runs 1 --tokens 8 --max-block 8 --no-cpu --compare ar,ngram --json " + json_path +
                              " --plot " + png);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto charts = charts_from_file(json_path);
    REQUIRE(charts.size() == 3);  // speed, tau, forward(T)/forward(1)
    CHECK(charts[0].labels == std::vector<std::string>{"plain", "n-gram"});
    CHECK(slurp(png).compare(1, 3, "PNG") == 0);
    const auto p = run_medusa("plot " + json_path + " " + svg);
    INFO(p.err);
    CHECK(p.exit_code == 0);
    CHECK(slurp(svg).find("<svg") != std::string::npos);
    const auto bad = run_medusa("plot " + medusa::test::model_path("stories260K.bin") + " " + svg);
    CHECK(bad.exit_code == 1);
    CHECK(bad.err.find("stories260K.bin") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("axis ticks stay few for a denormal, NaN, infinite or huge maximum", "[charts]") {
    const double inf = std::numeric_limits<double>::infinity();
    // 1e-323 is what a 120-byte bench file held: the step's power of ten underflowed to zero and
    // the ticks never reached the maximum.
    for (double max : {1e-323, 1e-323 * 1.15, 5e-324, 1e-310, DBL_MIN, 1e-300, 0.0, -1.0, -inf, inf, 0.0 / 0.0,
                       1e300, DBL_MAX}) {
        CAPTURE(max);
        const auto t = nice_ticks(max, 4);
        REQUIRE(t.size() >= 2);
        CHECK(t.size() <= 5);  // count + 1
        CHECK(t.front() == 0);
        for (size_t i = 1; i < t.size(); ++i) CHECK((std::isfinite(t[i]) && t[i] > t[i - 1]));
        CHECK(t.back() >= (max >= 1e-300 && max <= 1e300 ? max : 1.0));
    }
    CHECK(nice_ticks(1.0, std::numeric_limits<int>::max()).size() <= size_t(kMaxTickCount) + 1);
    CHECK(nice_ticks(1.0, -3).size() == 2);  // one step of 1
}

TEST_CASE("a label as long as its file is cut to its bar in a few measurements", "[charts]") {
    Chart c;
    c.title = "t";
    c.labels = {std::string(200000, 'm'), "b"};
    c.series = {{"s", {1, 2}}};
    int measured = 0;
    const TextWidth counting = [&](const std::string& s, Shape::Font f) {
        if (++measured > 1000) throw std::runtime_error("more than 1000 text measurements for one chart");
        return kFixedWidth(s, f);
    };
    const auto shapes = layout_chart(c, 0, 0, 400, 300, ChartTheme{}, counting);
    bool cut = false;
    for (const auto& s : shapes)
        if (s.kind == Shape::Kind::Text && s.text.size() > 2 && s.text.compare(s.text.size() - 2, 2, "..") == 0) {
            CHECK(7.0f * float(s.text.size()) <= 200.0f);  // within its slot of (400 - axes) / 2
            cut = true;
        }
    CHECK(cut);
    CHECK(measured < 100);
}

TEST_CASE("chart files of the wrong shape are refused or drawn with gaps, naming the file", "[charts]") {
    // Values of the wrong type are gaps; counts that are not whole numbers are left out.
    const json odd = json::parse(R"({"compare": {"runs": "three", "new_tokens_per_prompt": 1e300,
        "prompt_sets": {"stories": {"ar": {"tokens_per_s": "fast", "tau": 1}, "ngram": 7}, "retell": [1, 2]}},
        "vulkan": {"verify_latency_ms": [1, "x", {"tokens": 1, "ms": 2}, {"tokens": 1e300, "ms": 1},
                                         {"tokens": -4, "ms": 1}, {"tokens": 8, "ms": 3}]}})");
    const auto charts = charts_from_json(odd, "odd.json");
    REQUIRE(charts.size() == 3);
    CHECK(charts[0].labels == std::vector<std::string>{"plain", "n-gram"});
    CHECK(std::isnan(charts[0].series[0].values[0]));
    CHECK(charts[1].series[0].values[0] == 1);
    CHECK(charts[2].labels == std::vector<std::string>{"1", "8"});
    CHECK(charts[2].series[0].values == std::vector<double>{1.0, 1.5});
    for (const Chart& c : charts) CHECK_NOTHROW(layout_chart(c, 0, 0, 400, 300, ChartTheme{}, kFixedWidth));
    const json tree = json::parse(R"({"nodes": "all", "medusa_choices": [], "table": [3, {"nodes": 2.5},
        {"nodes": 4, "expected_tokens_per_step": 2, "step_ms": 1, "expected_tokens_per_s": 2000}]})");
    const auto budget = charts_from_json(tree, "tree.json");
    REQUIRE(budget.size() == 3);
    CHECK(budget[0].labels == std::vector<std::string>{"4"});
    CHECK(budget[0].highlight == -1);
    CHECK_THROWS_WITH(charts_from_json(json::parse(R"({"medusa_choices": [], "table": []})"), "empty.json"),
                      Catch::StartsWith("empty.json: a tuned tree with nothing to chart"));
    // More modes than bars fit: refused in one line naming the file.
    json many;
    for (int i = 0; i < 65; ++i) many["compare"]["prompt_sets"]["stories"]["draft:m" + std::to_string(i)]["tau"] = 1;
    CHECK_THROWS_AS(charts_from_json(many, "many.json"), medusa::FormatError);
    CHECK_THROWS_WITH(charts_from_json(many, "many.json"),
                      Catch::StartsWith("many.json: more than 64 decoding modes to chart"));
}

TEST_CASE("medusa plot draws a bench file whose maximum is denormal, in bounded memory", "[cli][charts]") {
    const medusa::test::TempDir dir("medusa_plot_denormal");
    auto bench_file = [&](const std::string& name, const std::string& value) {
        const std::string path = (dir.path / name).string();
        std::ofstream(path) << R"({"compare": {"prompt_sets": {"stories": {"ar": {"tokens_per_s": )" << value
                            << R"(, "tau": 1}}}}})";
        return path;
    };
    const std::string normal = bench_file("normal.json", "1000"), denormal = bench_file("denormal.json", "1e-323");
    const auto baseline = medusa::test::run_medusa_limited({"plot", normal, (dir.path / "normal.svg").string()});
    REQUIRE(baseline.exit_code == 0);
    const auto r = medusa::test::run_medusa_limited({"plot", denormal, (dir.path / "denormal.svg").string()}, 20);
    CAPTURE(r.err, baseline.max_rss_kb, r.max_rss_kb);
    CHECK(r.exit_code == 0);
    CHECK(r.max_rss_kb < baseline.max_rss_kb + 32 * 1024);
    CHECK(slurp((dir.path / "denormal.svg").string()).find("<svg") != std::string::npos);
}
