// Checks a medusa-chat screenshot: the expected size, not blank, the accepted-path orange drawn
// inside the tree panel, text drawn inside the chat history, and (given MODE) that the last turn
// ran in that mode, per the sidecar JSON. MODE auto: the step shown was shaped by the step
// controller and its chosen shape is highlighted in the tree panel's table; the orange is looked
// for only when that step drafted a tree (a plain step has none). Exit 0 only if all hold.
#include <stb/stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

struct Px {
    int r, g, b;
};

int fails = 0;
void expect(bool ok, const char* what, long value) {
    std::printf("%s %s (%ld)\n", ok ? "ok  " : "FAIL", what, value);
    if (!ok) ++fails;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5 && argc != 6) {
        std::fprintf(stderr, "usage: %s SHOT.png LAYOUT.json WIDTH HEIGHT [MODE]\n", argv[0]);
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* data = stbi_load(argv[1], &w, &h, &n, 3);
    if (!data) {
        std::fprintf(stderr, "cannot decode %s: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    auto at = [&](int x, int y) {
        const unsigned char* p = data + (size_t(y) * w + x) * 3;
        return Px{p[0], p[1], p[2]};
    };
    expect(w == std::atoi(argv[3]) && h == std::atoi(argv[4]), "size matches", long(w) * 10000 + h);

    std::set<int> colors;
    for (int y = 0; y < h; y += 2)
        for (int x = 0; x < w; x += 2) {
            Px p = at(x, y);
            colors.insert(p.r << 16 | p.g << 8 | p.b);
        }
    expect(colors.size() > 64, "not blank: distinct colours", long(colors.size()));

    nlohmann::json layout = nlohmann::json::parse(std::ifstream(argv[2]));
    auto region = [&](const char* name, auto&& count) {
        const auto& r = layout.at(name);
        const int x0 = std::max(0, int(r["x"].get<float>())), y0 = std::max(0, int(r["y"].get<float>()));
        const int x1 = std::min(w, x0 + int(r["w"].get<float>())), y1 = std::min(h, y0 + int(r["h"].get<float>()));
        long hits = 0, total = 0;
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x, ++total) hits += count(at(x, y)) ? 1 : 0;
        return std::pair{hits, total};
    };
    // MODE auto: the step controller chose each step's drafter, or plain decoding, which has no
    // tree to highlight; its choice is in the table of shapes weighed instead.
    const std::string mode_arg = argc == 6 ? argv[5] : "";
    const bool auto_mode = mode_arg.rfind("auto", 0) == 0;
    const nlohmann::json shown = layout.value("shown", nlohmann::json::object());
    if (auto_mode && shown.value("nodes", 0) <= 1) {
        std::printf("skip the step shown (%s) drafted nothing: no tree to highlight\n",
                    shown.value("drafter", std::string("?")).c_str());
    } else {
        // The accepted-path orange (255, 140, 0), allowing for blending at the edges of lines.
        auto [orange, tree_px] = region("tree", [](Px p) { return p.r > 225 && p.g > 110 && p.g < 170 && p.b < 50; });
        expect(orange >= 150, "tree panel: accepted-path highlight pixels", orange);
        expect(orange < tree_px / 4, "tree panel: highlight is not the whole panel", orange);
    }
    if (auto_mode) {
        const std::string reason = shown.value("control", std::string());
        std::printf("     the step shown: %s, the controller's reason: %s\n",
                    shown.value("drafter", std::string("?")).c_str(), reason.c_str());
        expect(!reason.empty(), "the step shown was shaped by the step controller", long(reason.size()));
        // The chosen shape's row, in its own opaque colour (palette.h: kChosenShape, 38 86 66).
        auto near = [](int a, int b) { return a >= b - 3 && a <= b + 3; };
        auto [chosen, table_px] =
            region("weighed", [&](Px p) { return near(p.r, 38) && near(p.g, 86) && near(p.b, 66); });
        expect(chosen >= 300, "tree panel: the chosen row of the shapes weighed is highlighted", chosen);
        expect(chosen < table_px / 2, "tree panel: the highlight is one row of the table", chosen);
    }

    // Text in the chat history: pixels clearly brighter than the panel background.
    std::map<int, long> hist;
    region("chat", [&](Px p) { return ++hist[p.r << 16 | p.g << 8 | p.b], false; });
    int bg = 0;
    long best = -1;
    for (auto [c, k] : hist)
        if (k > best) best = k, bg = c;
    const int bl = ((bg >> 16) + ((bg >> 8) & 255) + (bg & 255)) / 3;
    auto [text, chat_px] = region("chat", [&](Px p) { return (p.r + p.g + p.b) / 3 > bl + 60; });
    expect(text >= 400, "chat panel: text pixels", text);
    // Nothing cut off at the right edge of any panel (text that neither wraps nor scrolls).
    for (const auto& [panel, px] : layout.at("overflow").items()) {
        const std::string what = "panel '" + panel + "' clips nothing at its right edge (px past it)";
        expect(px.get<double>() <= 1.0, what.c_str(), long(px.get<double>()));
    }
    expect(layout.at("overflow").size() == 5, "every panel was audited", long(layout.at("overflow").size()));
    // The tree's boxes and labels, as the panel counted them while drawing.
    const nlohmann::json audit = layout.at("tree_audit");
    expect(audit.at("boxes").get<long>() >= 2, "tree: boxes drawn and audited", audit.at("boxes").get<long>());
    expect(audit.at("overlaps").get<long>() == 0, "tree: no boxes or labels overlap", audit.at("overlaps").get<long>());
    expect(audit.at("clipped").get<long>() == 0, "tree: no box or label cut off where scrolling cannot reach",
           audit.at("clipped").get<long>());
    // The accepted view fits its panel; the whole tree (--all-nodes) may need scrolling.
    if (!layout.value("all_nodes", false))
        expect(audit.at("out_of_view").get<long>() == 0, "tree: every box and label in view without scrolling",
               audit.at("out_of_view").get<long>());
    // The attention mask stands beside the tree's view, never over it.
    const nlohmann::json canvas = layout.at("tree_canvas"), mask = layout.at("mask");
    auto edge = [](const nlohmann::json& r, const char* k) { return r.at(k).get<double>(); };
    const bool apart = edge(mask, "w") <= 0 || edge(canvas, "w") <= 0 ||
                       edge(mask, "x") >= edge(canvas, "x") + edge(canvas, "w") ||
                       edge(mask, "x") + edge(mask, "w") <= edge(canvas, "x") ||
                       edge(mask, "y") >= edge(canvas, "y") + edge(canvas, "h") ||
                       edge(mask, "y") + edge(mask, "h") <= edge(canvas, "y");
    expect(apart, "tree: the attention mask does not cover the tree's view", long(edge(mask, "w")));
    expect(audit.at("edges_through_boxes").get<long>() == 0, "tree: no edge runs through a box",
           audit.at("edges_through_boxes").get<long>());
    std::printf("     tree: %ld boxes, %ld labels, %ld with their token cut to fit, %ld out of view (scroll)\n",
                audit.at("boxes").get<long>(), audit.at("labels").get<long>(), audit.at("cut_text").get<long>(),
                audit.at("out_of_view").get<long>());
    // A mode the user picked shows its drafter's work: every step drafted, or had nothing to draft
    // from; only auto may decode plainly where a draft would not pay.
    if (argc == 6 && !auto_mode && mode_arg != "plain") {
        const long steps = layout.at("steps").get<long>(), drafted = layout.at("drafted_steps").get<long>();
        std::printf("     %ld of %ld steps drafted, %ld had nothing to draft from\n", drafted, steps,
                    layout.at("nothing_to_draft").get<long>());
        expect(drafted > 0 && drafted + layout.at("nothing_to_draft").get<long>() == steps,
               "a picked mode drafts every step it has something to draft for", drafted);
    }
    if (argc == 6) {
        const std::string mode = layout.value("mode", std::string());
        std::printf("     last turn's mode: %s\n", mode.c_str());
        expect(mode.rfind(argv[5], 0) == 0, "the last turn ran in the expected mode", long(mode.size()));
    }
    stbi_image_free(data);
    return fails ? 1 : 0;
}
