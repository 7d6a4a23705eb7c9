#include "step_explain.h"

#include <cstdio>

#include "palette.h"

namespace medusa::chat {

namespace {

std::string quoted(std::string s) {
    for (auto& c : s)
        if (c == '\n') c = ' ';
    return "'" + s + "'";
}

std::string text_of(const StepRecord& r, int node) {
    return node >= 0 && node < int(r.node_text.size()) ? r.node_text[node] : "?";
}

std::string plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace

int token_origin(const StepTrace& step, int i) { return i < step.accepted ? i + 1 : 0; }

int token_origin(const StepRecord& r, int i) {
    if (r.source == StepSource::Draft) return i < r.trace.accepted ? kDraftOrigin : 0;
    return token_origin(r.trace, i);
}

int rejected_node(const StepTrace& step) {
    for (int i = 1; i < int(step.nodes.size()); ++i)
        if (step.nodes[i].tried && !step.nodes[i].passes) return i;
    return -1;
}

namespace {

std::string fixed2(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

// A draft step: node d (1..gamma) is the draft's d-th token; the target checked them in order.
std::string draft_caption(const StepRecord& r) {
    const StepTrace& s = r.trace;
    const int emitted = int(s.emitted.size());
    const std::string head = "Step " + std::to_string(s.step) + ": ";
    const int gamma = int(s.nodes.size()) - 1;
    if (gamma == 0)
        return head + "nothing left to draft; the target's own token " + quoted(r.bonus_text) + ".";
    std::string out = head + "the draft proposed " + plural(gamma, "token", "tokens") + " (";
    for (int d = 1; d <= gamma; ++d) {
        if (d > 6) {
            out += " ...";
            break;
        }
        out += (d > 1 ? " " : "") + quoted(text_of(r, d));
    }
    out += "); ";
    const int rej = rejected_node(s);
    if (rej < 0) {
        out += "the target accepted all " + std::to_string(s.accepted) + " and added its own next token " +
               quoted(r.bonus_text);
    } else {
        out += "the target accepted " + std::to_string(s.accepted) + "; at position " + std::to_string(rej) +
               " it rejected " + quoted(text_of(r, rej));
        const TreeNodeTrace& n = s.nodes[rej];
        if (r.sampled) {
            out += " (p/q = " + fixed2(n.draft_prob > 0 ? n.model_prob / n.draft_prob : 0) + ") and resampled " +
                   quoted(r.bonus_text) + " from max(0, p - q)";
        } else {
            out += " (not the target's top choice) and took the target's " + quoted(r.bonus_text) + " instead";
        }
    }
    out += "; " + plural(emitted, "token", "tokens") + " from one target pass.";
    return out;
}

}  // namespace

std::string step_caption(const StepRecord& r) {
    if (r.source == StepSource::Draft) return draft_caption(r);
    const StepTrace& s = r.trace;
    const int emitted = int(s.emitted.size());
    const bool medusa = s.drafter == "medusa";
    if (s.nodes.size() == 1 && medusa && s.step == 1)
        return "Step 1: the heads read the hidden state of the last token, which no pass has made yet: this pass "
               "checks the prompt's last token alone and gives the first token " +
               quoted(r.bonus_text) + "; the heads guess from the next step.";
    if (s.nodes.size() == 1)
        return "Step " + std::to_string(s.step) + ": " + (s.drafter == "plain" ? "plain decoding" : "nothing drafted") +
               " - one forward pass, the model's own token " + quoted(r.bonus_text) + " (1 token per pass).";
    // Who made the guess at depth d.
    auto guesser = [&](int d) {
        return medusa ? "head " + std::to_string(d) : s.drafter == "ngram" ? std::string("the lookup") : "the draft";
    };
    std::string out = "Step " + std::to_string(s.step) + ": ";
    // Name the accepted guesses (at most three, so the line stays one line).
    for (int d = 1; d <= s.accepted; ++d) {
        const int node = s.path[d];
        if (d > 3) {
            out += ", ...";
            break;
        }
        if (d > 1) out += ", ";
        out += guesser(d) + " guessed " + quoted(text_of(r, node)) + " (rank " +
               std::to_string(s.nodes[node].rank + 1) + ")";
    }
    if (s.accepted > 0) out += "; the model agreed";
    // The first depth where no guess passed: what the heads offered there, and what the model chose.
    const int last = s.path.empty() ? 0 : s.path.back();
    int best_child = -1;
    for (int i = 0; i < int(s.nodes.size()); ++i)
        if (s.nodes[i].parent == last && (best_child < 0 || s.nodes[i].rank < s.nodes[best_child].rank)) best_child = i;
    if (best_child >= 0) {
        out += s.accepted > 0 ? "; then " : "";
        out += guesser(s.accepted + 1) + " guessed " + quoted(text_of(r, best_child)) + " but the model chose " +
               quoted(r.bonus_text);
    } else {
        out += "; the model added " + quoted(r.bonus_text);
    }
    out += "; accepted " + plural(s.accepted, "guess", "guesses") + " + 1 own = " +
           plural(emitted, "token", "tokens") + " this step.";
    return out;
}

}  // namespace medusa::chat
