#include "transcript.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string_view>

#include "chat_fonts.h"
#include "palette.h"
#include "step_explain.h"

namespace medusa::chat {

namespace {

ImFont* font_of(const Span& s) { return font_for_style(s.style, s.place.heading); }

ImVec2 text_size(const Span& s, const char* begin, const char* end) {
    ImFont* f = font_of(s);
    return f->CalcTextSizeA(f->FontSize, FLT_MAX, 0.0f, begin, end);
}

// Text of one colour as one span per word (a word keeps the space before it), so that it wraps
// like the tokens do: lines break only between spans.
void push_words(std::vector<Span>& spans, const std::string& text, ImU32 color, uint8_t style = kMdPlain,
                MarkdownPlace place = {}) {
    std::string word;
    auto push = [&] { spans.push_back({word, color, -1, -1, -1, style, Span::Bubble::None, place}), word.clear(); };
    for (char c : text) {
        if ((c == ' ' || c == '\n') && !word.empty() && word != " ") push();
        word += c;
        if (c == '\n') push();
    }
    if (!word.empty()) push();
}

// A chat message as markdown: its text shown with the markup's styles (the layout's bullets and
// breaks in the message's colour).
void push_markdown(std::vector<Span>& spans, const std::string& text, ImU32 color) {
    for (const StyledRun& r : styled_runs({text})) push_words(spans, r.text, color, r.style, r.place);
}

// A chat reply as markdown, each shown byte keeping its token's colour, step and origin.
void push_reply(std::vector<Span>& spans, const std::vector<StepRecord>& steps, size_t first, size_t last) {
    std::vector<std::string> texts;
    std::vector<std::pair<int, int>> from;  // each token's (step, origin)
    for (size_t si = first; si < last; ++si)
        for (size_t k = 0; k < steps[si].emitted_text.size(); ++k) {
            texts.push_back(steps[si].emitted_text[k]);
            from.push_back({int(si), token_origin(steps[si], int(k))});
        }
    for (const StyledRun& r : styled_runs(texts)) {
        if (r.token < 0) {
            push_words(spans, r.text, kPromptText, r.style, r.place);
            continue;
        }
        const auto [step, origin] = from[size_t(r.token)];
        spans.push_back({r.text, origin_color(origin), step, origin, -1, r.style, Span::Bubble::None, r.place});
    }
}

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// One turn's spans: its steps are [first, last) of `steps`.
std::vector<Span> turn_spans(const TurnRecord& turn, int index, const std::vector<StepRecord>& steps, size_t first,
                             size_t last) {
    std::vector<Span> spans;
    // A reply kept as text: a reopened turn's, or an earlier one flipped back to (its steps are gone).
    const bool as_text = turn.restored || turn.shown_reply >= 0;
    const std::string& text_reply = turn.shown_reply >= 0 ? turn.other_replies[size_t(turn.shown_reply)] : turn.saved_reply;
    // A chat model's turn is a message and a reply, each under its speaker and shown as markdown.
    if (turn.chat) {
        spans.push_back({"You:\n", kRoleText});
        push_markdown(spans, turn.prompt, kPromptText);
        const size_t message_end = spans.size();
        spans.push_back({"\n\n", kPromptText}), spans.push_back({"Assistant:\n", kRoleText});
        const size_t reply_begin = spans.size() - 1;
        if (as_text) push_markdown(spans, text_reply, origin_color(0));
        else push_reply(spans, steps, first, last);
        for (size_t i = 0; i < spans.size(); ++i)
            spans[i].bubble = i < message_end ? Span::Bubble::Message : i >= reply_begin ? Span::Bubble::Reply : Span::Bubble::None;
    } else if (as_text) {
        push_words(spans, turn.prompt, kPromptText);
        push_words(spans, text_reply, origin_color(0));
    } else {
        push_words(spans, turn.prompt, kPromptText);
        for (size_t si = first; si < last; ++si)
            for (size_t k = 0; k < steps[si].emitted_text.size(); ++k) {
                const int origin = token_origin(steps[si], int(k));
                spans.push_back({steps[si].emitted_text[k], origin_color(origin), int(si), origin});
            }
    }
    for (Span& s : spans) s.turn = index;
    if (turn.done) {
        // One span per word, so the summary wraps like the text above it.
        char buf[256];
        std::snprintf(buf, sizeof buf, "[%s: %s in %s, stop: %s]", turn.mode.c_str(),
                      count(turn.new_tokens, "token", "tokens").c_str(),
                      count(turn.steps, "forward pass", "forward passes").c_str(), stop_reason_name(turn.stop_reason));
        spans.push_back({"\n", IM_COL32(120, 120, 130, 255)});
        push_words(spans, buf, IM_COL32(120, 120, 130, 255));  // (of no turn: no message menu on it)
        if (!turn.other_replies.empty()) {
            const int count = int(turn.other_replies.size()) + 1;
            push_words(spans, " [reply " + std::to_string(turn.shown_reply < 0 ? count : turn.shown_reply + 1) + " of " +
                                  std::to_string(count) + "]",
                       IM_COL32(120, 120, 130, 255));
        }
    }
    if (turn.left_out) {
        spans.push_back({"\n", kLeftOut});
        push_words(spans, "[left out of the model's context: it no longer reads this turn]", kLeftOut);
    }
    return spans;
}

// Width of the word starting with text [begin, end) of span i: it and the following spans up to
// the next space.
float word_width(const std::vector<Span>& spans, size_t i, const char* begin, const char* end) {
    float w = text_size(spans[i], begin, end).x;
    for (size_t j = i + 1; j < spans.size() && j < i + 8; ++j) {
        const std::string& t = spans[j].text;
        if (t.empty() || t[0] == ' ' || t[0] == '\n' || !(spans[j].place == spans[i].place)) break;
        w += text_size(spans[j], t.data(), t.data() + t.size()).x;
    }
    return w;
}

constexpr float kCellPad = 6;  // a table cell's text from its grid lines

// A span's text without the line breaks a table's layout ignores (the grid breaks its rows).
std::string_view cell_text(const Span& s) {
    std::string_view t = s.text;
    while (!t.empty() && t.back() == '\n') t.remove_suffix(1);
    while (!t.empty() && t.front() == '\n') t.remove_prefix(1);
    return t;
}

}  // namespace

void Transcript::update(const StepLogReader& reader, float width) {
    built_ = placed_ = 0;
    width_ = width;
    line_h_ = ImGui::GetTextLineHeightWithSpacing();
    const auto& turns = reader.turns();
    const auto& steps = reader.steps();
    turns_.resize(turns.size());
    size_t first = 0;
    height_ = 0;
    for (size_t k = 0; k < turns.size(); ++k) {
        const TurnRecord& turn = turns[k];
        Turn& t = turns_[k];
        const bool same = t.built && t.epoch == reader.epoch() && t.id == turn.id && t.first_step == first;
        // Steps are only appended, and only to the last turn: an earlier turn's range stays.
        size_t last = same ? t.last_step : first;
        while (last < steps.size() && steps[last].turn == turn.id) ++last;
        if (!same || last != t.last_step || turn.done != t.done) {
            t.spans = turn_spans(turn, int(k), steps, first, last);
            t.built = true, t.epoch = reader.epoch(), t.id = turn.id;
            t.first_step = first, t.last_step = last, t.done = turn.done;
            t.width = -1;
            ++built_;
        }
        if (t.width != width || t.font_size != ImGui::GetFontSize()) {
            place(t, width);
            ++placed_;
        }
        height_ += (k > 0 ? line_h_ : 0) + t.height;  // a blank line between turns
        first = last;
    }
    if (turns.empty()) height_ = line_h_;
}

void Transcript::place(Turn& t, float width) const {
    t.width = width, t.font_size = ImGui::GetFontSize();
    t.runs.clear(), t.grid.clear(), t.header_fill.clear();
    t.bubble_top[0] = t.bubble_top[1] = t.bubble_bottom[0] = t.bubble_bottom[1] = 0;
    const float spacing = line_h_ - ImGui::GetTextLineHeight();
    float x = 0, y = 0, band_y = -1, line_h = line_h_;  // line_h: this line's, a heading's is taller
    auto new_line = [&] { x = 0, y += line_h, line_h = line_h_; };
    auto mark_bubble = [&](const Span& s) {
        if (s.bubble == Span::Bubble::None) return;
        const int b = s.bubble == Span::Bubble::Message ? 0 : 1;
        if (t.bubble_bottom[b] == 0) t.bubble_top[b] = y;
        t.bubble_bottom[b] = std::max(t.bubble_bottom[b], y + line_h);
    };
    for (size_t i = 0; i < t.spans.size(); ++i) {
        const Span& s = t.spans[i];
        if (s.place.in_table()) {
            if (x > 0) new_line();
            const float top = y;
            i = place_table(t, i, width, y) - 1;
            x = 0, line_h = line_h_;
            if (s.bubble != Span::Bubble::None) {  // the table is on its message's or reply's bubble
                const int b = s.bubble == Span::Bubble::Message ? 0 : 1;
                if (t.bubble_bottom[b] == 0) t.bubble_top[b] = top;
                t.bubble_bottom[b] = std::max(t.bubble_bottom[b], y);
            }
            continue;
        }
        const std::string& text = s.text;
        size_t start = 0;
        while (start <= text.size()) {
            const size_t nl = text.find('\n', start), end = nl == std::string::npos ? text.size() : nl;
            if (end > start) {
                const char *b = text.data() + start, *e = text.data() + end;
                if (*b == ' ' && x > 0 && x + word_width(t.spans, i, b, e) > width) new_line();
                const ImVec2 sz = text_size(s, b, e);
                line_h = std::max(line_h, sz.y + spacing);
                const bool band = (s.style & kMdCodeBlock) && y != band_y;
                if (band) band_y = y;
                t.runs.push_back({uint32_t(i), uint32_t(start), uint32_t(end), x, y, sz.x, sz.y, band});
                mark_bubble(s);
                x += sz.x;
            }
            if (nl == std::string::npos) break;
            new_line();
            start = nl + 1;
        }
    }
    t.height = y + line_h;
    // A table's later cells start above the earlier ones' last lines: drawn by height, as found.
    std::stable_sort(t.runs.begin(), t.runs.end(), [](const Run& a, const Run& b) { return a.y < b.y; });
}

size_t Transcript::place_table(Turn& t, size_t first, float width, float& y) const {
    const int table = t.spans[first].place.table;
    size_t last = first;
    int rows = 0, cols = 0;
    for (; last < t.spans.size() && t.spans[last].place.in_table() && t.spans[last].place.table == table; ++last)
        rows = std::max(rows, t.spans[last].place.row + 1), cols = std::max(cols, t.spans[last].place.col + 1);
    if (cols == 0) return last;
    // Columns as wide as their widest cell, narrowed alike where the table is wider than the panel
    // (their text wraps within them).
    std::vector<float> natural(size_t(rows * cols), 0.0f), col_w(size_t(cols), 2 * kCellPad);
    for (size_t i = first; i < last; ++i) {
        const Span& s = t.spans[i];
        const std::string_view text = cell_text(s);
        if (s.place.row < 0 || s.place.col < 0 || text.empty()) continue;
        float& w = natural[size_t(s.place.row * cols + s.place.col)];
        w += text_size(s, text.data(), text.data() + text.size()).x;
        col_w[size_t(s.place.col)] = std::max(col_w[size_t(s.place.col)], w + 2 * kCellPad);
    }
    float total = 0;
    for (float w : col_w) total += w;
    if (total > width - 1)
        for (float& w : col_w) w *= (width - 1) / total;
    std::vector<float> col_x(size_t(cols) + 1, 0.0f);
    for (int c = 0; c < cols; ++c) col_x[size_t(c) + 1] = col_x[size_t(c)] + col_w[size_t(c)];
    // Each row's cells wrap within their columns; the row is as tall as its tallest cell.
    std::vector<float> row_y = {y};
    std::vector<float> cell_x(size_t(cols), 0.0f), cell_y(size_t(cols), 0.0f);
    int row = -1;
    float row_bottom = y;
    auto start_row = [&](int r) {
        while (row < r) {
            if (row >= 0) row_y.push_back(row_bottom);
            ++row;
            for (int c = 0; c < cols; ++c) cell_x[size_t(c)] = 0, cell_y[size_t(c)] = row_y.back() + 2;
            row_bottom = row_y.back() + line_h_ + 4;
        }
    };
    for (size_t i = first; i < last; ++i) {
        const Span& s = t.spans[i];
        const std::string_view text = cell_text(s);
        if (s.place.row < 0 || s.place.col < 0 || text.empty()) continue;
        start_row(s.place.row);
        const size_t c = size_t(s.place.col);
        const float room = std::max(1.0f, col_w[c] - 2 * kCellPad);
        const ImVec2 sz = text_size(s, text.data(), text.data() + text.size());
        if (text.front() == ' ' && cell_x[c] > 0 && cell_x[c] + sz.x > room) cell_x[c] = 0, cell_y[c] += line_h_;
        const uint32_t begin = uint32_t(text.data() - s.text.data());
        t.runs.push_back({uint32_t(i), begin, begin + uint32_t(text.size()), col_x[c] + kCellPad + cell_x[c], cell_y[c],
                          sz.x, sz.y, false});
        cell_x[c] += sz.x;
        row_bottom = std::max(row_bottom, cell_y[c] + line_h_ + 2);
    }
    start_row(rows - 1);
    row_y.push_back(row_bottom);
    // The grid: a line under every row and between every column, the header row filled.
    const float x1 = col_x.back();
    t.header_fill.push_back({0, row_y[0], x1, row_y[1]});
    for (float ry : row_y) t.grid.push_back({0, ry, x1, ry});
    for (float cx : col_x) t.grid.push_back({cx, row_y.front(), cx, row_y.back()});
    y = row_y.back() + 4;
    return last;
}

const Span* Transcript::draw(ImVec2 origin, int selected_step, std::map<uint8_t, int>& drawn) const {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float clip_top = dl->GetClipRectMin().y, clip_bottom = dl->GetClipRectMax().y;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const Span* hovered = nullptr;
    drawn_blocks_ = {};
    dl->ChannelsSplit(2);  // the bubbles go under the text
    float top = origin.y;
    for (size_t k = 0; k < turns_.size() && top <= clip_bottom; ++k) {
        const Turn& t = turns_[k];
        if (k > 0) top += line_h_;
        if (top + t.height < clip_top) {
            top += t.height;
            continue;
        }
        dl->ChannelsSetCurrent(0);
        for (int b = 0; b < 2; ++b)
            if (t.bubble_bottom[b] > 0)
                dl->AddRectFilled(ImVec2(origin.x - 5, top + t.bubble_top[b] - 3), ImVec2(origin.x + width_ + 1, top + t.bubble_bottom[b]),
                                  b == 0 ? IM_COL32(38, 44, 60, 255) : IM_COL32(34, 34, 40, 255), 6);
        for (const ImVec4& f : t.header_fill)
            dl->AddRectFilled(ImVec2(origin.x + f.x, top + f.y), ImVec2(origin.x + f.z, top + f.w), IM_COL32(50, 54, 70, 255));
        for (const ImVec4& g : t.grid) {
            dl->AddLine(ImVec2(origin.x + g.x, top + g.y), ImVec2(origin.x + g.z, top + g.w), IM_COL32(95, 98, 115, 255));
            ++drawn_blocks_.grid_lines;
        }
        dl->ChannelsSetCurrent(1);
        // The first run on a line that reaches into view.
        auto run = std::lower_bound(t.runs.begin(), t.runs.end(), clip_top - top - line_h_,
                                    [](const Run& r, float y) { return r.y < y; });
        for (; run != t.runs.end() && top + run->y <= clip_bottom; ++run) {
            const Span& s = t.spans[run->span];
            const uint8_t style = s.style;
            const ImVec2 p(origin.x + run->x, top + run->y), q(p.x + run->w, p.y + run->h);
            if (run->code_band)
                dl->AddRectFilled(ImVec2(origin.x - 2, p.y), ImVec2(origin.x + width_, p.y + line_h_), IM_COL32(30, 32, 42, 255));
            if (style & kMdCode) dl->AddRectFilled(ImVec2(p.x - 1, p.y), ImVec2(q.x + 1, q.y), IM_COL32(55, 58, 72, 255), 3);
            if (s.origin > 0) dl->AddRectFilled(p, q, origin_color(s.origin, 0.18f), 2);
            if ((s.step >= 0 && s.step == selected_step) || (style & kMdLink))
                dl->AddLine(ImVec2(p.x, q.y), q, style & kMdLink ? s.color : IM_COL32_WHITE, style & kMdLink ? 1.0f : 1.5f);
            if (style & kMdStrike) dl->AddLine(ImVec2(p.x, p.y + run->h * 0.55f), ImVec2(q.x, p.y + run->h * 0.55f), s.color);
            const char* text = s.text.data();
            ImFont* font = font_of(s);
            dl->AddText(font, font->FontSize, p, s.color, text + run->begin, text + run->end);
            if (s.place.heading > 0) drawn_blocks_.heading_px = std::max(drawn_blocks_.heading_px, font->FontSize);
            ++drawn[style];
            if (mouse.x >= p.x && mouse.x < q.x && mouse.y >= p.y && mouse.y < q.y) hovered = &s;
        }
        top += t.height;
    }
    dl->ChannelsMerge();
    return hovered;
}

}  // namespace medusa::chat
