#include "png_file.h"

#include <stb/stb_image_write.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/atomic_file.h"
#include "turn_speed.h"
#include "markdown_text.h"
#include "model/json_file.h"

namespace medusa::chat {

void write_png(const std::string& path, const Image& image) {
    // Encoded in memory, then written as every other output is: whole, and never through a link.
    std::string bytes;
    auto append = [](void* out, void* data, int size) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(data), size_t(size));
    };
    if (!stbi_write_png_to_func(append, &bytes, image.width, image.height, 4, image.rgba.data(), image.width * 4))
        throw std::runtime_error("cannot encode " + path + " as PNG");
    write_file_atomically(path, bytes);
}

void write_layout_json(const std::string& path, const Image& image, const ChatApp& app) {
    int drafted_steps = 0, nothing_to_draft = 0;
    for (const StepRecord& r : app.reader.steps()) {
        if (r.node_count() > 1) ++drafted_steps;
        else if (!r.trace.control || r.trace.control->reason == ControlReason::NothingDrafted) ++nothing_to_draft;
    }
    auto rect = [](const Rect& r) { return nlohmann::json{{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}}; };
    nlohmann::json j{{"width", image.width},
                     {"height", image.height},
                     {"tree", rect(app.tree_rect)},
                     {"tree_canvas", rect(app.tree_canvas_rect)},
                     {"mask", rect(app.mask_rect)},
                     {"all_nodes", app.tree_all},
                     {"chat", rect(app.chat_rect)},
                     {"steps", app.reader.steps().size()},
                     // Steps that verified a draft, and steps whose drafter had nothing to propose
                     // (no match, no hidden state yet): in a picked mode every step is one or the other.
                     {"drafted_steps", drafted_steps},
                     {"nothing_to_draft", nothing_to_draft},
                     {"overflow", nlohmann::json::object()},
                     {"mode", app.reader.turns().empty() ? "" : app.reader.turns().back().mode},
                     {"status", app.worker.status()},  // what is loaded: the model, its drafter's files
                     {"warnings", app.worker.warnings()}};
    for (const auto& [panel, px] : app.overflow) j["overflow"][panel] = px;
    const TreeAuditCounts& a = app.tree_audit;
    j["tree_audit"] = {{"boxes", a.boxes},       {"labels", a.labels},
                       {"overlaps", a.overlaps}, {"clipped", a.clipped}, {"out_of_view", a.out_of_view},
                       {"edges_through_boxes", a.edges_through_boxes}, {"cut_text", a.cut_text}};
    // How much of the transcript each markdown style drew (runs of text).
    nlohmann::json md = {{"plain", 0}, {"strong", 0}, {"emphasis", 0}, {"code", 0}, {"code_block", 0}, {"heading", 0},
                         {"link", 0}, {"quote", 0}, {"strike", 0}};
    const std::pair<uint8_t, const char*> names[] = {{kMdStrong, "strong"}, {kMdEmphasis, "emphasis"}, {kMdCode, "code"},
                                                     {kMdCodeBlock, "code_block"}, {kMdHeading, "heading"},
                                                     {kMdLink, "link"}, {kMdQuote, "quote"}, {kMdStrike, "strike"}};
    for (const auto& [style, runs] : app.markdown_drawn) {
        if (style == kMdPlain) md["plain"] = md["plain"].get<int>() + runs;
        for (const auto& [flag, name] : names)
            if (style & flag) md[name] = md[name].get<int>() + runs;
    }
    j["markdown"] = md;
    // The last turn's speed as the app shows it (prefill and teaching-mode pauses left out).
    if (!app.reader.turns().empty()) {
        const TurnRecord& t = app.reader.turns().back();
        const TurnSpeed sp = turn_speed(t, app.reader.steps());
        j["turn"] = {{"new_tokens", t.new_tokens},
                     {"steps", t.steps},
                     {"decode_ms", sp.decode_ms},
                     {"prefill_ms", sp.prefill_ms},
                     {"tokens_per_s", sp.tokens_per_s()}};
    }
    // The timeline's account of the last turn's shaped steps, and the speed-up measurement.
    if (!app.reader.turns().empty()) {
        const SpeedupResult m = app.worker.speedup();
        const TimelineSpeedup sp = timeline_speedup(app.reader.turns().back(), app.reader.steps(), m);
        j["timeline"] = {{"shaped_steps", sp.shaped_steps}, {"predicted", sp.predicted},
                         {"measured", sp.measured ? nlohmann::json(*sp.measured) : nlohmann::json()}};
        if (m.valid) j["measured_speedup"] = {{"speedup", m.speedup()}, {"tokens_per_s", m.tokens_per_s},
                                              {"plain_tokens_per_s", m.plain_tokens_per_s}};
    }
    // The step the tree panel shows: whether it drew a tree (the highlight test needs one) and
    // what the step controller chose for it, with where its table of shapes landed.
    j["weighed"] = rect(app.weighed_rect);
    if (const int shown = app.shown_step(); shown >= 0) {
        const StepRecord& r = app.reader.steps()[size_t(shown)];
        j["shown"] = {{"step", r.trace.step},
                      {"drafter", drafter_kind_name(r.trace.drafter)},
                      {"nodes", r.node_count()},
                      {"accepted", r.trace.accepted},
                      {"control", r.trace.control ? control_reason_name(r.trace.control->reason) : ""}};
    }
    write_file_atomically(path, json_text(j));
}

}  // namespace medusa::chat
