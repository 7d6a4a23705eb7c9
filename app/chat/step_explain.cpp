#include "step_explain.h"

#include <algorithm>
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

std::string guesser(const StepTrace& s, int d) {
    switch (s.drafter) {
        case DrafterKind::Medusa: return "head " + std::to_string(d);
        case DrafterKind::Eagle: return "EAGLE level " + std::to_string(d);
        case DrafterKind::Ngram: return "the lookup";
        case DrafterKind::Plain:
        case DrafterKind::DraftModel:
        case DrafterKind::Auto: break;
    }
    return "the draft";
}

std::string row_label(const StepTrace& s, int d) {
    if (d == 0) return "root";
    if (s.drafter == DrafterKind::Medusa) return "head " + std::to_string(d);
    if (s.drafter == DrafterKind::DraftModel) return "draft " + std::to_string(d);
    return "level " + std::to_string(d);
}

namespace {

// "layers 0, 2 and 4" / "layer 2".
std::string layer_list(const std::vector<int>& layers) {
    std::string out = layers.size() == 1 ? "layer " : "layers ";
    for (size_t i = 0; i < layers.size(); ++i) {
        if (i) out += i + 1 == layers.size() ? " and " : ", ";
        out += std::to_string(layers[i]);
    }
    return out;
}

}  // namespace

std::string drafter_explanation(const StepTrace& s, const std::optional<EagleReads>& eagle) {
    switch (s.drafter) {
        case DrafterKind::Medusa:
            return "Medusa: K extra heads read the model's last hidden state; head k guesses the token k places ahead.";
        case DrafterKind::Eagle:
            if (eagle && eagle->version == EagleVersion::Eagle3) {
                std::string t = "EAGLE-3 drafts from fused features: the residual stream entering the model's ";
                t += layer_list(eagle->target_layers);
                t += eagle->fused ? " is fused by fc into one state" : " is its state";
                t += "; one small layer reads it with the next token and predicts the next state (level 2 on reads "
                     "its own prediction), and its own head over ";
                t += std::to_string(eagle->draft_vocab) + " of the " + std::to_string(eagle->vocab);
                t += " tokens guesses, level by level.";
                return t;
            }
            return "EAGLE drafts at the feature level: one small layer reads the model's own hidden state and the next "
                   "token, predicts the next hidden state, and the model's own LM head turns it into guesses, level by "
                   "level.";
        case DrafterKind::Ngram:
            return "n-gram lookup: the last few tokens are found earlier in the text, and what followed them there is "
                   "proposed; no model, no training.";
        case DrafterKind::DraftModel:
            return "A small draft model writes the next tokens one by one; the target checks them all at once.";
        case DrafterKind::Plain:
        case DrafterKind::Auto: break;
    }
    return "Plain decoding: one forward pass per token.";
}

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

std::string fixed3(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
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
    if (emitted == s.accepted + 1) out += "; " + plural(emitted, "token", "tokens") + " from one target pass.";
    else out += "; the turn's end kept " + plural(emitted, "token", "tokens") + " of them.";
    return out;
}

}  // namespace

std::string step_caption(const StepRecord& r) {
    if (r.details_dropped) {
        std::string text;
        for (const auto& piece : r.emitted_text) text += piece;
        return "Step " + std::to_string(r.trace.step) + " gave " + plural(int(r.emitted_text.size()), "token", "tokens") +
               " (" + quoted(text) + ") from a tree of " + plural(r.dropped_nodes, "node", "nodes") +
               ". Only the latest " + std::to_string(kDetailedSteps) +
               " steps keep their trees, so a long session's memory stays bounded.";
    }
    if (r.source == StepSource::Draft) return draft_caption(r);
    const StepTrace& s = r.trace;
    const int emitted = int(s.emitted.size());
    const bool medusa = s.drafter == DrafterKind::Medusa;
    if (s.nodes.size() == 1 && medusa && s.step == 1)
        return "Step 1: the heads read the hidden state of the last token, which no pass has made yet: this pass "
               "checks the prompt's last token alone and gives the first token " +
               quoted(r.bonus_text) + "; the heads guess from the next step.";
    if (s.nodes.size() == 1)
        return "Step " + std::to_string(s.step) + ": " + (s.drafter == DrafterKind::Plain ? "plain decoding" : "nothing drafted") +
               " - one forward pass, the model's own token " + quoted(r.bonus_text) + " (1 token per pass).";
    auto guesser = [&](int d) { return medusa::chat::guesser(s, d); };
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
    if (emitted == s.accepted + 1)
        out += "; accepted " + plural(s.accepted, "guess", "guesses") + " + 1 own = " +
               plural(emitted, "token", "tokens") + " this step.";
    else  // the token budget or a stop token ended the turn inside this step
        out += "; accepted " + plural(s.accepted, "guess", "guesses") + " + 1 own, of which the turn's end kept " +
               plural(emitted, "token", "tokens") + ".";
    return out;
}

}  // namespace medusa::chat

namespace medusa::chat {

std::vector<std::string> node_explanation(const StepRecord& r, int i) {
    const StepTrace& s = r.trace;
    const TreeNodeTrace& n = s.nodes.at(i);
    std::vector<std::string> out;
    if (i == 0) {
        out.push_back("root " + quoted(text_of(r, 0)) + ": the last token emitted, not yet in the cache; every guess "
                      "continues from it");
        return out;
    }
    out.push_back(quoted(text_of(r, i)) + ": guessed by " + guesser(s, n.depth) + " (its rank-" +
                  std::to_string(n.rank + 1) + " choice)");
    out.push_back("q, the drafter's probability of it: " + fixed3(n.draft_prob) +
                  (n.sampled ? " (drawn from q)" : " (chosen as a top guess)"));
    out.push_back("p, the model's probability of it: " + fixed3(n.model_prob));
    if (!n.tried) {
        int parent_accepted = s.nodes[n.parent].accepted;
        out.push_back(parent_accepted ? "not tried: a sibling tried before it was accepted"
                                      : "not tried: its parent was not accepted");
        return out;
    }
    if (s.rule == AcceptRule::Greedy) {
        const std::string choice =
            i < int(r.greedy_text.size()) && !r.greedy_text[i].empty() ? quoted(r.greedy_text[i]) : "another token";
        out.push_back(std::string(n.passes ? "passes" : "fails") + ": the model's own choice here is " + choice);
    } else if (s.rule == AcceptRule::Typical) {
        out.push_back(std::string(n.passes ? "passes" : "fails") + ": p " + fixed3(n.model_prob) +
                      (n.passes ? " > " : " <= ") + "threshold " + fixed3(n.limit) + " = min(eps, delta exp(-H))");
    } else if (n.draw >= 0) {
        out.push_back(std::string(n.passes ? "accepted" : "rejected") + ": drawn u = " + fixed3(n.draw) +
                      (n.passes ? " < " : " >= ") + "r(x)/q(x) = " + fixed3(n.ratio) + " (r: what was left of p)");
    }
    out.push_back(n.accepted ? "ACCEPTED: on the path the model kept"
                  : n.passes ? "passes the rule, but on a shorter path than the accepted one"
                             : "rejected");
    return out;
}

}  // namespace medusa::chat

namespace medusa::chat {

TeachingPhase next_phase(TeachingPhase p) {
    return p == TeachingPhase::WholeStep || p == TeachingPhase::Commit ? TeachingPhase::Draft : TeachingPhase(int(p) + 1);
}

const char* phase_name(TeachingPhase phase) {
    switch (phase) {
        case TeachingPhase::WholeStep: return "the whole step";
        case TeachingPhase::Draft: return "draft";
        case TeachingPhase::Tree: return "tree";
        case TeachingPhase::Forward: return "forward";
        case TeachingPhase::Acceptance: return "acceptance";
        case TeachingPhase::Commit: return "commit";
    }
    return "";
}

std::string phase_caption(const StepRecord& r, TeachingPhase phase) {
    const StepTrace& s = r.trace;
    const int n = int(s.nodes.size());
    int depth = 0;
    for (const auto& node : s.nodes) depth = std::max(depth, node.depth);
    const std::string head = "Phase " + std::to_string(int(phase)) + "/" + std::to_string(kPhases) + ", " + phase_name(phase) + ": ";
    switch (phase) {
        case TeachingPhase::Draft:
            if (n <= 1) return head + "nothing to propose this step; the model will decode the root alone.";
            return head + drafter_explanation(s) + " It proposed " + plural(n - 1, "candidate", "candidates") +
                   " after the root " + quoted(text_of(r, 0)) + ", " + plural(depth, "level", "levels") + " deep.";
        case TeachingPhase::Tree:
            return head + "the tree becomes one block of " + plural(n, "token", "tokens") + " at cache slots " +
                   std::to_string(s.base) + ".." + std::to_string(s.base + n - 1) +
                   ": node i sits at position base + its depth and sees the cached text and its own ancestors only "
                   "(the mask: row = node, column = what it may attend to).";
        case TeachingPhase::Forward:
            return head + "one forward pass over all " + plural(n, "node", "nodes") +
                   " gives the model's distribution after each: p of every candidate at its parent (in the boxes).";
        case TeachingPhase::Acceptance: {
            const char* rule = s.rule == AcceptRule::Greedy    ? "greedy: a candidate passes if it is the model's own choice"
                               : s.rule == AcceptRule::Typical ? "typical: a candidate passes if p > min(eps, delta e^-H)"
                                                               : "sample: try children in order, keep x if u < r(x)/q(x)";
            return head + rule + ". The path kept: " + plural(s.accepted, "candidate", "candidates") +
                   ", then the model's own " + quoted(r.bonus_text) + ".";
        }
        case TeachingPhase::Commit:
            return head + "the kept path's keys and values move to consecutive cache slots " + std::to_string(s.base) +
                   ".." + std::to_string(s.base + s.accepted) + "; the rest of the tree is forgotten, and " +
                   quoted(r.bonus_text) + " is the next step's root. " +
                   plural(int(s.emitted.size()), "token", "tokens") + " from one pass.";
        case TeachingPhase::WholeStep: break;
    }
    return step_caption(r);
}

}  // namespace medusa::chat
