// The conversation as the chat panel draws it: each turn's text as spans (the prompt, then the
// reply token by token in its origin's colour, or a chat model's message and reply as markdown;
// then the turn's summary), placed in lines at the panel's width (headings in larger faces, tables
// as grids). A turn is built and placed once,
// and again only when it changes (a new step, its end) or the width does; a frame draws only the
// lines in view. A frame then costs what it shows, not what the conversation holds: a saved chat
// of megabytes had its markdown redone and every word drawn each frame.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "markdown_text.h"
#include "step_log.h"

namespace medusa::chat {

struct Span {
    std::string text;
    ImU32 color;
    int step = -1;    // index into the reader's steps; -1 for prompt text
    int origin = -1;  // -1: prompt
    int turn = -1;    // index into the reader's turns
    uint8_t style = kMdPlain;  // a chat message's markdown (markdown_text.h)
    // A chat model's turn: the message or the reply it belongs to (each drawn on a bubble).
    enum class Bubble : uint8_t { None, Message, Reply } bubble = Bubble::None;
    MarkdownPlace place;  // a heading (a larger face) or a table cell (laid out in a grid)
};

class Transcript {
public:
    // Brings every turn up to date with `reader`, placed at `width` in the current ImGui font.
    void update(const StepLogReader& reader, float width);
    float height() const { return height_; }
    // Draws the lines within the window's clip rectangle, the first turn's top-left at `origin`;
    // returns the span under the mouse (nullptr: none). `drawn` counts the runs drawn per style.
    const Span* draw(ImVec2 origin, int selected_step, std::map<uint8_t, int>& drawn) const;
    // What the last update did: turns built (their spans made from the text) and placed (laid
    // into lines). Both 0 when nothing changed.
    int built() const { return built_; }
    int placed() const { return placed_; }
    // What the last draw showed of markdown's blocks: the largest heading's size in px (0: none),
    // and the lines of tables' grids.
    struct Blocks {
        float heading_px = 0;
        int grid_lines = 0;
    };
    const Blocks& drawn_blocks() const { return drawn_blocks_; }

private:
    // A span's bytes [begin, end) on one line, at (x, y) from its turn's top-left.
    struct Run {
        uint32_t span, begin, end;
        float x, y, w, h;
        bool code_band;  // the first run of a code block's line: a band goes across the width first
    };
    struct Turn {
        bool built = false;
        uint64_t epoch = 0;
        int id = 0;
        size_t first_step = 0, last_step = 0;  // its steps: [first, last) of the reader's
        bool done = false;
        std::vector<Span> spans;
        float width = -1, font_size = 0;  // what it was placed at
        std::vector<Run> runs;            // in reading order, so y never decreases
        float bubble_top[2] = {0, 0}, bubble_bottom[2] = {0, 0};  // message, reply (bottom 0: none)
        std::vector<ImVec4> grid;         // tables' lines, (x0, y0, x1, y1) from the turn's top-left
        std::vector<ImVec4> header_fill;  // tables' header rows, (x0, y0, x1, y1)
        float height = 0;
    };
    void place(Turn& t, float width) const;
    // Lays out the table starting at span `first` as a grid from (0, y); returns the span after
    // it and moves y below it.
    size_t place_table(Turn& t, size_t first, float width, float& y) const;

    std::vector<Turn> turns_;
    float width_ = 0, line_h_ = 0, height_ = 0;
    int built_ = 0, placed_ = 0;
    mutable Blocks drawn_blocks_;
};

}  // namespace medusa::chat
