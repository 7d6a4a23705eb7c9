// Decoding mode, acceptance rule, tree, heads, files, and the teaching mode (pause, single step,
// slow motion). Changes apply to the next Send.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <string>

#include "chat_app.h"
#include "decode/tree.h"

namespace medusa::chat {

namespace {

void help(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

}  // namespace

void draw_controls_panel(ChatApp& app) {
    DecodeSettings& s = app.settings;
    const bool busy = app.worker.busy();
    ImGui::PushItemWidth(-110);  // room for the labels
    ImGui::TextWrapped("%s", app.ctx.info().name.c_str());
    ImGui::TextDisabled("%s, %s", app.ctx.info().vendor.c_str(), app.ctx.info().driver.c_str());
    ImGui::Separator();

    ImGui::TextUnformatted("Decoding");
    int mode = int(s.mode);
    ImGui::RadioButton("plain", &mode, int(DecodeMode::Plain));
    ImGui::SameLine();
    ImGui::RadioButton("Medusa", &mode, int(DecodeMode::Medusa));
    ImGui::SameLine();
    ImGui::RadioButton("draft model", &mode, int(DecodeMode::Draft));
    ImGui::SameLine();
    ImGui::RadioButton("n-gram", &mode, int(DecodeMode::Ngram));
    help("Plain: one forward pass per token.\nMedusa: extra heads guess the next tokens; one pass checks all the "
         "guesses at once (a tree of candidates) and keeps those the model agrees with.\nDraft model: a small "
         "model writes gamma tokens ahead one by one; the big model checks the whole chain in one pass and keeps "
         "the prefix it agrees with.\nn-gram: no model at all: the last few tokens are looked up earlier in the "
         "text, and what followed them there is proposed.");
    s.mode = DecodeMode(mode);
    const bool medusa = s.mode == DecodeMode::Medusa, draft = s.mode == DecodeMode::Draft;

    const char* rules[] = {"greedy", "typical", "sample"};
    int rule = std::min(int(s.rule), 2);
    ImGui::SetNextItemWidth(120);
    if (ImGui::Combo("acceptance", &rule, rules, 3)) s.rule = AcceptRule(rule);
    help("greedy: accept a guess if it is the model's argmax.\ntypical: accept if the model gives it enough "
         "probability (threshold from eps and delta); the token after them is the argmax.\nsample: lossless "
         "speculative sampling: keep guess x with probability min(1, p(x)/q(x)), at a rejection draw from what is "
         "left of p. The text has exactly the model's own distribution.");
    const bool greedy = s.rule == AcceptRule::Greedy;
    ImGui::BeginDisabled(greedy);
    ImGui::SliderFloat("temperature", &s.temperature, 0.05f, 2.0f, "%.2f");
    ImGui::EndDisabled();
    int seed = int(s.seed);
    if (ImGui::InputInt("seed", &seed)) s.seed = uint64_t(std::max(0, seed));

    if (draft) {
        ImGui::InputText("draft", &s.draft_path);
        help("The draft model file: a smaller model with the target's tokenizer (for stories260K, its q8_0 copy "
             "stories260K_q80.bin).");
        ImGui::SliderInt("gamma", &s.gamma, 1, 16);
        help("Levels the draft proposes per step (the chain's length).");
        ImGui::Checkbox("adaptive gamma", &s.adaptive_gamma);
        help("Grow gamma by one after a step that accepted every drafted token, shrink it by one when fewer than "
             "half were accepted.");
        ImGui::SliderInt("branches", &s.draft_branches, 1, 4);
        help("Children per drafted node: 1 drafts a chain; more draft a tree whose best nodes are expanded.");
    } else if (s.mode == DecodeMode::Ngram) {
        ImGui::SliderInt("n-gram tokens", &s.ngram_tokens, 1, 16);
        help("The longest continuation proposed per step.");
    } else {
        ImGui::BeginDisabled(!medusa);
        ImGui::BeginDisabled(s.rule != AcceptRule::Typical);
        ImGui::SliderFloat("eps", &s.typical_eps, 0.0f, 0.5f, "%.3f");
        ImGui::SliderFloat("delta", &s.typical_delta, 0.0f, 1.0f, "%.2f");
        ImGui::EndDisabled();
        static const std::vector<std::string> presets = tree_preset_names();
        ImGui::SetNextItemWidth(160);
        if (ImGui::BeginCombo("tree", s.tree.c_str())) {
            for (const auto& p : presets)
                if (ImGui::Selectable(p.c_str(), p == s.tree)) s.tree = p;
            ImGui::EndCombo();
        }
        ImGui::SetNextItemWidth(160);
        ImGui::InputText("##treespec", &s.tree);
        help("A preset, dense:W1,W2,.. (every node at depth d gets W_d children), chain:N, or a JSON file of "
             "medusa_choices (scripts/train_default_heads.sh writes a tuned one).");
        ImGui::SliderInt("heads", &s.num_heads, 1, 7);
        help("How many Medusa heads (tree levels) to use; deeper levels of the tree are cut off.");
        ImGui::EndDisabled();
    }
    ImGui::SliderInt("max tokens", &s.max_new_tokens, 8, 1024);

    ImGui::Separator();
    ImGui::TextUnformatted("Teaching mode");
    bool paused = app.worker.paused();
    if (ImGui::Checkbox("pause before each step", &paused)) app.worker.set_paused(paused);
    ImGui::SameLine();
    ImGui::BeginDisabled(!paused || !busy);
    if (ImGui::Button("step")) app.worker.step_once();
    ImGui::EndDisabled();
    static int delay = 0;
    if (ImGui::SliderInt("slow (ms/step)", &delay, 0, 1500)) app.worker.set_delay_ms(delay);
    ImGui::TextDisabled("The tree panel's caption explains each step.");

    ImGui::Separator();
    ImGui::TextUnformatted("Files (or drop them on the window)");
    ImGui::InputText("model", &s.model_path);
    ImGui::InputText("tokenizer", &s.tokenizer_path);
    ImGui::InputTextWithHint("heads", "untrained: init from model", &s.heads_path);
    ImGui::BeginDisabled(busy);
    if (ImGui::Button("Load")) app.load();
    ImGui::EndDisabled();
    const std::string status = app.worker.status(), error = app.worker.last_error();
    if (!status.empty()) ImGui::TextWrapped("%s", status.c_str());
    if (!app.defaults_note.empty()) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("%s", app.defaults_note.c_str());
        ImGui::PopTextWrapPos();
    }
    if (!error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
        ImGui::TextWrapped("%s", error.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::PopItemWidth();
}

}  // namespace medusa::chat
