// Decoding mode, acceptance rule and sampling, each drafter's settings, the files, and the
// teaching mode (pause, single step or phase, slow motion). Changes apply to the next Send.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <functional>
#include <string>

#include "chat_app.h"
#include "control_explain.h"
#include "decode/tree.h"

namespace medusa::chat {

namespace {

void help(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

// A path field with a "..." button that opens the file chooser for it.
// While a path field is not being edited, a path wider than it shows its end ("...models/x.bin":
// the file's name matters, not the root folders), the whole path in the tooltip.
void show_path_tail(const std::string& path) {
    if (ImGui::IsItemActive() || path.empty()) return;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    const ImVec2 pad = ImGui::GetStyle().FramePadding;
    const float room = b.x - a.x - 2 * pad.x;
    if (ImGui::CalcTextSize(path.c_str()).x <= room) return;
    size_t start = 0;
    std::string shown;
    do {
        ++start;
        while (start < path.size() && (static_cast<unsigned char>(path[start]) & 0xC0) == 0x80) ++start;  // whole UTF-8 characters
        shown = "..." + path.substr(start);
    } while (start < path.size() && ImGui::CalcTextSize(shown.c_str()).x > room);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    // Over the field's own text: the window's colour made opaque, then the field's translucent one.
    ImVec4 under = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    under.w = 1.0f;
    dl->AddRectFilled(ImVec2(a.x + 1, a.y + 1), ImVec2(b.x - 1, b.y - 1), ImGui::ColorConvertFloat4ToU32(under));
    dl->AddRectFilled(ImVec2(a.x + 1, a.y + 1), ImVec2(b.x - 1, b.y - 1),
                      ImGui::GetColorU32(ImGui::IsItemHovered() ? ImGuiCol_FrameBgHovered : ImGuiCol_FrameBg));
    dl->AddText(ImVec2(a.x + pad.x, a.y + pad.y), ImGui::GetColorU32(ImGuiCol_Text), shown.c_str());
}

// A path typed or chosen in the file dialog: `shown` in the field, `set` given what is typed or chosen.
void path_field(ChatApp& app, const char* label, const char* hint, std::string shown,
                const std::function<void(const std::string&)>& set, const char* title) {
    ImGui::PushID(label);
    ImGui::SetNextItemWidth(ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - 4);
    if (ImGui::InputTextWithHint("##path", hint, &shown)) set(shown);
    show_path_tail(shown);
    ImGui::SameLine(0, 4);
    if (ImGui::Button("...", ImVec2(ImGui::GetFrameHeight(), 0))) app.files.open(shown, set, title);
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    ImGui::PopID();
}

void path_field(ChatApp& app, const char* label, const char* hint, std::string& path, const char* title) {
    path_field(app, label, hint, path, [&path](const std::string& p) { path = p; }, title);
}

// Medusa's heads file, as the word heads_field() gives: empty for the cache's, "init" for untrained.
void heads_field(ChatApp& app, const char* hint) {
    DecodeSettings& s = app.settings;
    path_field(app, "heads file", hint, heads_field(s), [&s](const std::string& w) { set_heads_field(s, w); },
               "Choose Medusa heads");
}

// Indexed by DrafterKind: the combo box below converts between them.
const char* kModes[] = {"plain", "Medusa", "draft model", "n-gram lookup", "EAGLE", "auto"};

// Whether the step controller shapes each step (the default) or the mode's own shape is drafted
// every step. Neither plain decoding (nothing drafted) nor auto (the controller is its point) has
// a choice.
void draw_fixed_shape(DecodeSettings& s) {
    const bool applies = s.mode != DrafterKind::Plain && s.mode != DrafterKind::Auto;
    bool fixed = applies && s.fixed_shape;
    ImGui::BeginDisabled(!applies);
    if (ImGui::Checkbox("Fixed shape", &fixed)) s.fixed_shape = fixed;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
        ImGui::TextUnformatted(
            "Draft the mode's own tree, gamma or n-gram length every step instead of the step controller's shape.\n\n"
            "Off (the default), the controller weighs before each step what each shape is expected to give per "
            "millisecond on this device and text and drafts as much as pays best; it never drops the drafter: where "
            "it would have decoded plainly, the tree panel says so and what drafting saved or lost (mode auto may "
            "decode plainly).");
        if (!applies)
            ImGui::TextDisabled(s.mode == DrafterKind::Auto ? "(auto: the controller always shapes the steps)"
                                                             : "(plain decoding drafts nothing)");
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

// Which drafter, which acceptance rule, and the sampling that shapes p (and q) in every mode.
void draw_mode_and_sampling(DecodeSettings& s) {
    int mode = int(s.mode);
    if (ImGui::Combo("decoding", &mode, kModes, IM_ARRAYSIZE(kModes))) s.mode = DrafterKind(mode);
    help("Every mode is the same loop: a drafter proposes candidate tokens, one forward pass of the model checks them "
         "all, and the acceptance rule keeps what the model agrees with.\n\nplain: no drafter, one pass per token.\n"
         "Medusa: extra heads on the model's last hidden state guess the next tokens, as a tree.\ndraft model: a "
         "small model writes gamma tokens ahead.\nn-gram lookup: the last few tokens are found earlier in the text; "
         "what followed them is proposed. No model, no training.\nEAGLE: drafting at the feature level: one small "
         "layer predicts the model's next hidden state, and the model's own LM head turns it into guesses.\nauto: "
         "the step controller chooses, step by step, among n-gram lookup and every drafter the files name (trained "
         "heads, an EAGLE layer, a draft model), or plain decoding when no draft is expected to pay.");
    const bool plain = s.mode == DrafterKind::Plain;
    draw_fixed_shape(s);

    // Plain decoding has no guesses to accept: its rule is only how the next token is chosen.
    const char* rules[] = {"greedy", "typical", "sample"};
    const char* plain_rules[] = {"greedy", "sample"};
    int rule = std::min(int(s.rule), 2);
    if (plain) {
        int r = rule == 2 ? 1 : 0;
        if (ImGui::Combo("next token", &r, plain_rules, 2)) s.rule = r == 1 ? AcceptRule::Sample : AcceptRule::Greedy;
        if (s.rule == AcceptRule::Typical) s.rule = AcceptRule::Greedy;
        help("greedy: the most likely token.\nsample: a draw from the model's distribution, shaped by the temperature, "
             "top-k, top-p and the repetition penalty.");
    } else {
        if (ImGui::Combo("acceptance", &rule, rules, 3)) s.rule = AcceptRule(rule);
        help("greedy: keep a guess if it is the model's most likely token; the text is exactly plain greedy "
             "decoding's.\ntypical (Medusa's): keep a guess if the model gives it more than min(eps, delta e^-H); the "
             "token after them is the model's most likely.\nsample: lossless speculative sampling: try guess x, keep "
             "it with probability min(1, r(x)/q(x)) (r: what is left of the model's p, q: the drafter's), after a "
             "rejection take q out of r; the text has exactly the model's own distribution.");
    }
    const bool greedy = s.rule == AcceptRule::Greedy;
    ImGui::BeginDisabled(greedy);
    SamplingParams& p = s.sampling;
    ImGui::SliderFloat("temperature", &p.temperature, 0.05f, 2.0f, "%.2f");
    ImGui::EndDisabled();
    ImGui::SliderInt("top-k", &p.top_k, 0, 100, p.top_k == 0 ? "off" : "%d");
    ImGui::SliderFloat("top-p", &p.top_p, 0.05f, 1.0f, p.top_p >= 1.0f ? "off" : "%.2f");
    ImGui::SliderFloat("min-p", &p.min_p, 0.0f, 0.5f, p.min_p <= 0.0f ? "off" : "%.2f");
    ImGui::SliderFloat("repeat pen.", &p.repeat_penalty, 1.0f, 2.0f, p.repeat_penalty <= 1.0f ? "off" : "%.2f");
    help("Shape the model's distribution p (and a draft model's q, alike) in every mode: keep only the k most likely "
         "tokens, the smallest set reaching probability p, the tokens at least min-p times as likely as the likeliest, "
         "and divide the logits of tokens used in the last 64 by the penalty. The penalty changes greedy decoding too.");
    int seed = int(p.seed);
    if (ImGui::InputInt("seed", &seed)) p.seed = uint64_t(std::max(0, seed));

}

// Auto: what it does, which drafters it has files for, and those files.
void draw_auto_settings(ChatApp& app, DecodeSettings& s) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Each step, the step controller drafts with whichever drafter is expected to give the most "
                        "tokens per millisecond, or decodes plainly.");
    std::string uses = "It will use: ";
    const std::vector<DrafterKind> drafters = auto_drafters(s);
    for (size_t i = 0; i < drafters.size(); ++i)
        uses += (i ? ", " : "") + std::string(drafter_phrase(drafters[i])) +
                (drafters[i] == DrafterKind::Ngram ? " (always)" : "");
    ImGui::TextUnformatted(uses.c_str());
    ImGui::PopTextWrapPos();
    heads_field(app, "trained for this model, if any");
    help("Auto uses Medusa only with trained heads: this file, else those the cache holds for this model (its "
         "EAGLE layer too, where the layer field is empty); with Medusa mode's tree and heads settings.");
    path_field(app, "layer", "none: no EAGLE", s.eagle.layer, "Choose an EAGLE layer folder, or an EAGLE-3 .gguf");
    path_field(app, "draft", "none: no draft model", s.draft.model, "Choose a draft model");
    help("Empty a file to leave its drafter out. n-gram lookup needs no file: it looks the last tokens up in the "
         "text.");
}

// The chosen drafter's own settings.
void draw_drafter_settings(ChatApp& app, DecodeSettings& s) {
    if (s.mode == DrafterKind::Auto) {
        draw_auto_settings(app, s);
    } else if (s.mode == DrafterKind::DraftModel) {
        path_field(app, "draft", "draft model file", s.draft.model, "Choose a draft model");
        help("A smaller model with the target's tokenizer (for stories260K, its q8_0 copy stories260K_q80.bin).");
        ImGui::SliderInt("gamma", &s.draft.gamma, 1, 16);
        help("Levels the draft proposes per step (the chain's length).");
        ImGui::Checkbox("adaptive gamma", &s.draft.adaptive_gamma);
        help("Grow gamma by one after a step that accepted every drafted token, shrink it by one when fewer than half "
             "were accepted.");
        ImGui::SliderInt("branches", &s.draft.branches, 1, 4);
        help("Children per drafted node: 1 drafts a chain; more draft a tree whose best nodes are expanded.");
    } else if (s.mode == DrafterKind::Ngram) {
        ImGui::SliderInt("n-gram", &s.ngram.max_tokens, 1, 16, "%d tokens");
        help("The longest continuation of a match proposed per step, in tokens.");
    } else if (s.mode == DrafterKind::Eagle) {
        path_field(app, "layer", "from medusa train-eagle", s.eagle.layer, "Choose an EAGLE layer folder, or an EAGLE-3 .gguf");
        if (std::string tree = eagle_tree_word(s.eagle.tree); ImGui::InputText("EAGLE tree", &tree))
            s.eagle.tree = parse_eagle_tree(tree);
        help("dynamic: EAGLE-2 (expand the likeliest nodes of each level, keep the likeliest overall); or a tree of "
             "rank paths (a preset such as mc_sim_7b_63, dense:W,..): EAGLE-1.");
        ImGui::SliderInt("top-k", &s.eagle.top_k, 1, 16);
        ImGui::SliderInt("depth", &s.eagle.depth, 1, 10);
        ImGui::SliderInt("nodes", &s.eagle.nodes, 1, 127);
    } else if (s.mode == DrafterKind::Medusa) {
        static const std::vector<std::string> presets = tree_preset_names();
        const std::string tuned = "tuned (else " + MedusaSpec{}.tree + ")";
        std::string tree = tree_field(s);
        if (ImGui::BeginCombo("tree", tree.empty() ? tuned.c_str() : tree.c_str())) {
            if (ImGui::Selectable(tuned.c_str(), tree.empty())) set_tree_field(s, "");
            for (const auto& p : presets)
                if (ImGui::Selectable(p.c_str(), p == tree)) set_tree_field(s, p);
            ImGui::EndCombo();
        }
        if (tree = tree_field(s); ImGui::InputText("tree spec", &tree)) set_tree_field(s, tree);
        help("A preset, dense:W1,W2,.. (every node at depth d gets W_d children), chain:N, or a JSON file of "
             "medusa_choices. Empty: the tree scripts/train_default_heads.sh tuned for this model and device, where "
             "the cache holds one. The status line names the tree in use.");
        ImGui::SliderInt("heads", &s.medusa.num_heads, 1, 7);
        help("How many Medusa heads (tree levels) to use; deeper levels of the tree are cut off.");
        heads_field(app, "trained for this model, else untrained");
        help("Empty: the heads trained for this model in the cache (recognised by the model's content, whatever "
             "its file is called), else heads initialised from the model; init: always those.");
    }
    if (s.rule == AcceptRule::Typical && s.mode != DrafterKind::Plain) {
        ImGui::SliderFloat("eps", &s.typical.eps, 0.0f, 0.5f, "%.3f");
        ImGui::SliderFloat("delta", &s.typical.delta, 0.0f, 1.0f, "%.2f");
    }
}

// The chat template the model is spoken to in: its own (named once it is loaded), or one chosen for
// this model where it has none or the wrong one; kept per model with the settings.
void draw_chat_template(ChatApp& app, DecodeSettings& s) {
    const auto chosen = s.chat_templates.find(s.model_path);
    const ChatTemplateDetection own = app.worker.model_chat_template();
    const std::string own_label = std::string("the model's (") + chat_template_name(own.kind) + ")";
    const std::string shown = chosen == s.chat_templates.end() ? own_label : chosen->second;
    if (ImGui::BeginCombo("template", shown.c_str())) {
        if (ImGui::Selectable(own_label.c_str(), chosen == s.chat_templates.end())) s.chat_templates.erase(s.model_path);
        for (ChatTemplate t : {ChatTemplate::ChatML, ChatTemplate::Llama3, ChatTemplate::Llama2Chat, ChatTemplate::Zephyr,
                               ChatTemplate::VicunaV11, ChatTemplate::Qwen3, ChatTemplate::Gemma, ChatTemplate::Phi3,
                               ChatTemplate::Phi4, ChatTemplate::None}) {
            const char* name = chat_template_name(t);
            if (ImGui::Selectable(t == ChatTemplate::None ? "none (continue the text)" : name,
                                  chosen != s.chat_templates.end() && chosen->second == name))
                s.chat_templates[s.model_path] = name;
        }
        ImGui::EndCombo();
    }
    help(("The chat template: how messages and replies are put to the model. The model's own: " + own.reason +
          ". Choose one where the model has none or the wrong one (kept for this model); none continues the text "
          "as a story. Applies from the next Send.")
             .c_str());
}

// Pause, single steps, phases and slow motion.
void draw_teaching_controls(ChatApp& app, bool busy) {
    ImGui::TextUnformatted("Teaching mode");
    bool paused = app.worker.paused();
    if (ImGui::Checkbox("pause before each step", &paused)) app.worker.set_paused(paused);
    ImGui::BeginDisabled(!paused || !busy);
    if (ImGui::Button("next step")) app.worker.step_once(), app.phase = TeachingPhase::WholeStep;
    ImGui::SameLine();
    ImGui::EndDisabled();
    ImGui::BeginDisabled(!paused);
    if (ImGui::Button("next phase")) app.next_phase();
    ImGui::EndDisabled();
    help("While paused, walk through the latest step phase by phase: what the drafter proposed, the tree built from "
         "it and its attention mask, the forward pass, the acceptance rule's verdicts, and what the cache keeps.");
    static int delay = 0;
    if (ImGui::SliderInt("slow (ms)", &delay, 0, 1500)) app.worker.set_delay_ms(delay);
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("The tree panel's caption explains each step; hover a node for the number that decided it.");
    ImGui::PopTextWrapPos();

}

// The model and tokenizer files, and what the worker loaded (or why it could not).
void draw_files_and_status(ChatApp& app, DecodeSettings& s, bool busy) {
    ImGui::TextUnformatted("Files (or drop them on the window)");
    path_field(app, "model", "model file or folder", s.model_path, "Choose a model");
    if (!app.recent_models.empty()) {  // the models opened before, most recent first
        ImGui::SetNextItemWidth(ImGui::CalcItemWidth());
        if (ImGui::BeginCombo("##recent models", "recent models")) {
            for (const std::string& path : app.recent_models)
                if (ImGui::Selectable(path.c_str(), path == s.model_path)) s.model_path = path;
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The models opened before; choose one, then Load (or Send).");
    }
    path_field(app, "tokenizer", "the model's own vocabulary", s.tokenizer_path, "Choose a tokenizer");
    ImGui::BeginDisabled(busy);
    if (ImGui::Button("Load")) app.load();
    ImGui::EndDisabled();
    const std::string status = app.worker.status(), error = app.worker.last_error();
    ImGui::PushTextWrapPos(0);
    if (!status.empty()) ImGui::TextUnformatted(status.c_str());
    if (!app.drop_note.empty()) ImGui::TextDisabled("%s", app.drop_note.c_str());
    for (const std::string& w : app.worker.warnings()) ImGui::TextColored(ImVec4(1.0f, 0.7f, 0.3f, 1.0f), "warning: %s", w.c_str());
    if (!error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
        ImGui::TextUnformatted(error.c_str());
        ImGui::PopStyleColor();
    }
}

}  // namespace

void draw_controls_panel(ChatApp& app) {
    DecodeSettings& s = app.settings;
    const bool busy = app.worker.busy();
    ImGui::PushItemWidth(-118);  // room for the labels and their (?)
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(app.ctx.info().name.c_str());
    ImGui::TextDisabled("%s, %s", app.ctx.info().vendor.c_str(), app.ctx.info().driver.c_str());
    ImGui::PopTextWrapPos();
    ImGui::Separator();
    draw_mode_and_sampling(s);
    ImGui::Separator();
    draw_drafter_settings(app, s);
    ImGui::SliderInt("max tokens", &s.max_new_tokens, 8, 1024);
    ImGui::InputTextMultiline("system", &s.system_prompt, ImVec2(ImGui::CalcItemWidth(), ImGui::GetTextLineHeight() * 2.6f));
    help("Chat models only (their template has a system turn): replaces the model family's default system prompt. "
         "Story models continue the text as it is.");
    draw_chat_template(app, s);

    ImGui::Separator();
    draw_teaching_controls(app, busy);
    ImGui::Separator();
    draw_files_and_status(app, s, busy);
    ImGui::PopTextWrapPos();
    ImGui::PopItemWidth();
    app.files.draw();
}

}  // namespace medusa::chat
