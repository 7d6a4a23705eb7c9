// The step controller: before every step it weighs the shapes its drafters could propose, by
// what the cost model says each verify pass costs on this device and what the acceptance model
// says each drafted node is worth, and takes the shape with the most expected tokens per
// millisecond, down to the root alone (plain decoding) when no draft is expected to pay.
// - A drafter whose proposal is nearly free (n-gram lookup, the Medusa tree whose tokens the
//   verify pass drafts) proposes every step; the controller keeps the best part of its tree.
// - A drafter that pays per level (a draft model, EAGLE's layer) is given the depth that pays
//   before it drafts, and what it drafted is cut again once its confidences are known.
// When sampling, the shapes follow the cost model and what this generation has shown of
// acceptance alone (learned afresh each generation, no clock), so a seed gives the same text each
// time on a device; greedy text is the same whatever the shapes, and there it learns from the
// clock too. With one drafter this is that drafter's default mode; with several it is `auto`, which goes to
// whichever pays on the text at hand. It learns as it goes: each drafter's time per proposal or
// level, how this run's verify passes compare with the measured curve, and, from every verdict,
// how often each kind of node is accepted; n-gram proposals not verified are scored against the
// text that followed, and a drafter not chosen for a while drafts one level to be re-measured, as
// often as keeps what that costs under 3% of the time decoding.
#pragma once
#include <chrono>
#include <map>
#include <vector>

#include "decode/acceptance_model.h"
#include "decode/cost_model.h"
#include "decode/drafter.h"

namespace medusa {

struct ControlOptions {
    // Learn from the clock (each drafter's time, this run's verify passes) and re-measure idle
    // drafters; off, the controller decides by the cost model and the acceptance it learns alone
    // (tests on synthetic tables).
    bool learn_timing = true;
    // Shape the drafter's proposal but never drop it for plain decoding: where plain decoding is
    // expected to pay best, the best drafted shape is verified all the same (ControlReason::
    // DraftedAnyway), so that a front end teaching a drafter shows its work every step.
    bool always_draft = false;
};

class ControlledDrafter final : public Drafter {
public:
    // `drafters` (one, or several for auto) are kept by the caller and outlive this.
    ControlledDrafter(std::vector<Drafter*> drafters, CostModel costs, ControlOptions options = {});
    DrafterKind kind() const override { return kind_; }
    void before_prompt() override;
    void begin(std::span<const int> prompt) override;
    CandidateTree propose(const DraftContext& c) override;
    const DraftStage* device_stage() const override;
    void verified(const VerifiedStep& step) override;
    uint64_t submits() const override;
    std::vector<PreparedBlock> blocks_to_prepare() const override;
    const ControlTrace* control() const override { return &trace_; }

    // A model drafter's time per level, measured before decoding (else learned from its first
    // proposal, which starts optimistic).
    void set_level_ms(size_t drafter, double ms);
    // What a drafter's device stage (Medusa's heads) adds to each verify pass it drafts.
    void set_stage_ms(size_t drafter, double ms);
    const CostModel& costs() const { return costs_; }
    const AcceptanceModel& acceptance(size_t drafter) const { return members_.at(drafter).acceptance; }

private:
    struct Member {
        Drafter* drafter;
        AcceptanceModel acceptance;
        double draft_ms = 0;     // a cheap proposal's time, or a costly drafter's per level (learned)
        double measured_ms = 0;  // a costly drafter's per level, measured before decoding
        double stage_ms = 0;     // a device stage's time in each verify pass it drafts (measured)
        bool timed = false;
        int idle = 0;               // steps since its proposal was last verified
        double idle_ms = 0;         // and their time
        double last_ms = 0;         // what its last proposal took (a model drafter's catch-up included)
        bool proposed = false;      // its propose() ran this step
        CandidateTree tree;         // this step's cheap proposal
        std::vector<int> kept;      // the part of it that pays best
    };
    // An n-gram proposal not verified, scored against the tokens that came after it.
    struct Shadow {
        size_t member = 0;
        size_t start = 0;  // where its first token would be in the sequence
        std::vector<int> tokens;
        int evidence = 0;
    };
    // The measured curve (plus the drafter's stage, for a pass that runs one), scaled by what
    // this run's passes of that size and kind took: of the nearest size of the same kind until
    // one of this size has passed, else of the other kind.
    double verify_ms(int tokens, const Member* staged = nullptr) const;
    double verify_scale(int tokens, bool staged) const;
    double nominal_ms(int tokens, const Member* staged) const {
        return costs_.verify.at(tokens) + (staged ? staged->stage_ms : 0.0);
    }
    std::vector<double> path_prob(const Member& m, const CandidateTree& t) const;
    // A step's parts: each member's best shape weighed against plain decoding (returns the member
    // of each weighed option, -1 for plain); the best chosen; an idle member's turn to explore;
    // the chosen member's draft; the proposals not verified scored against the text to come.
    std::vector<int> weigh(const DraftContext& c, int room);
    void choose_best();
    void explore(const std::vector<int>& member_of, double step_ms);
    CandidateTree draft_chosen(const DraftContext& c, int room);
    void shadow_the_rest(size_t sequence_length);
    void learn_cost(Member& m, double ms);
    void resolve_shadows(std::span<const int> sequence);
    void add_shadow(size_t member, const CandidateTree& t, size_t start);

    std::vector<Member> members_;
    CostModel costs_;
    ControlOptions options_;
    DrafterKind kind_;
    bool fresh_ = true;       // no step of this generation proposed yet
    bool first_step_ = true;  // no step of this generation verified yet
    bool sampling_ = false;  // this generation samples: no clock, acceptance from its own steps
    bool timing() const { return options_.learn_timing && !sampling_; }
    // A model drafter's catch-up on the tokens since it last drafted: one forward over them, taken
    // as half a level each (0 under sampling's clock-free decisions, which keep seeds reproducible).
    double catch_up_ms(const Member& m) const { return timing() ? 0.5 * m.idle * draft_cost(m) : 0.0; }
    // What a member's proposal (cheap) or level (costly) is taken to cost this step.
    double draft_cost(const Member& m) const { return timing() ? m.draft_ms : m.measured_ms; }
    // By (a stage ran, block size): this run's passes against nominal_ms (learned).
    std::map<std::pair<bool, int>, double> verify_scale_;
    std::chrono::steady_clock::time_point last_propose_;
    ControlTrace trace_;
    int chosen_ = -1;  // the member whose proposal this step verifies; -1: plain
    std::chrono::steady_clock::time_point proposed_at_;
    std::vector<Shadow> shadows_;
};

}  // namespace medusa
