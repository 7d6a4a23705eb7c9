#include "transcript.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "chat_fonts.h"
#include "palette.h"
#include "step_explain.h"

namespace medusa::chat {

namespace {

ImVec2 text_size(uint8_t style, const char* begin, const char* end) {
    return font_for_style(style)->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0.0f, begin, end);
}

// Text of one colour as one span per word (a word keeps the space before it), so that it wraps
// like the tokens do: lines break only between spans.
void push_words(std::vector<Span>& spans, const std::string& text, ImU32 color, uint8_t style = kMdPlain) {
    std::string word;
    auto push = [&] { spans.push_back({word, color, -1, -1, -1, style}), word.clear(); };
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
    for (const StyledRun& r : styled_runs({text})) push_words(spans, r.text, color, r.style);
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
            push_words(spans, r.text, kPromptText, r.style);
            continue;
        }
        const auto [step, origin] = from[size_t(r.token)];
        spans.push_back({r.text, origin_color(origin), step, origin, -1, r.style});
    }
}

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// One turn's spans: its steps are [first, last) of `steps`.
std::vector<Span> turn_spans(const TurnRecord& turn, int index, const std::vector<StepRecord>& steps, size_t first,
                             size_t last) {
    std::vector<Span> spans;
    // A chat model's turn is a message and a reply, each under its speaker and shown as markdown.
    if (turn.chat) {
        spans.push_back({"You:\n", kRoleText});
        push_markdown(spans, turn.prompt, kPromptText);
        const size_t message_end = spans.size();
        spans.push_back({"\n\n", kPromptText}), spans.push_back({"Assistant:\n", kRoleText});
        const size_t reply_begin = spans.size() - 1;
        if (turn.restored) push_markdown(spans, turn.saved_reply, origin_color(0));
        else push_reply(spans, steps, first, last);
        for (size_t i = 0; i < spans.size(); ++i)
            spans[i].bubble = i < message_end ? Span::Bubble::Message : i >= reply_begin ? Span::Bubble::Reply : Span::Bubble::None;
    } else if (turn.restored) {
        push_words(spans, turn.prompt, kPromptText);
        push_words(spans, turn.saved_reply, origin_color(0));
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
    }
    return spans;
}

// Width of the word starting with text [begin, end) of span i: it and the following spans up to
// the next space.
float word_width(const std::vector<Span>& spans, size_t i, const char* begin, const char* end) {
    float w = text_size(spans[i].style, begin, end).x;
    for (size_t j = i + 1; j < spans.size() && j < i + 8; ++j) {
        const std::string& t = spans[j].text;
        if (t.empty() || t[0] == ' ' || t[0] == '\n') break;
        w += text_size(spans[j].style, t.data(), t.data() + t.size()).x;
    }
    return w;
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
    t.runs.clear();
    t.bubble_top[0] = t.bubble_top[1] = t.bubble_bottom[0] = t.bubble_bottom[1] = 0;
    float x = 0, y = 0, band_y = -1;
    for (size_t i = 0; i < t.spans.size(); ++i) {
        const Span& s = t.spans[i];
        const std::string& text = s.text;
        size_t start = 0;
        while (start <= text.size()) {
            const size_t nl = text.find('\n', start), end = nl == std::string::npos ? text.size() : nl;
            if (end > start) {
                const char *b = text.data() + start, *e = text.data() + end;
                if (*b == ' ' && x > 0 && x + word_width(t.spans, i, b, e) > width) x = 0, y += line_h_;
                const ImVec2 sz = text_size(s.style, b, e);
                const bool band = (s.style & kMdCodeBlock) && y != band_y;
                if (band) band_y = y;
                t.runs.push_back({uint32_t(i), uint32_t(start), uint32_t(end), x, y, sz.x, sz.y, band});
                if (s.bubble != Span::Bubble::None) {
                    const int b = s.bubble == Span::Bubble::Message ? 0 : 1;
                    if (t.bubble_bottom[b] == 0) t.bubble_top[b] = y;
                    t.bubble_bottom[b] = std::max(t.bubble_bottom[b], y + line_h_);
                }
                x += sz.x;
            }
            if (nl == std::string::npos) break;
            x = 0, y += line_h_;
            start = nl + 1;
        }
    }
    t.height = y + line_h_;
}

const Span* Transcript::draw(ImVec2 origin, int selected_step, std::map<uint8_t, int>& drawn) const {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float clip_top = dl->GetClipRectMin().y, clip_bottom = dl->GetClipRectMax().y;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const Span* hovered = nullptr;
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
            dl->AddText(font_for_style(style), ImGui::GetFontSize(), p, s.color, text + run->begin, text + run->end);
            ++drawn[style];
            if (mouse.x >= p.x && mouse.x < q.x && mouse.y >= p.y && mouse.y < q.y) hovered = &s;
        }
        top += t.height;
    }
    dl->ChannelsMerge();
    return hovered;
}

}  // namespace medusa::chat
