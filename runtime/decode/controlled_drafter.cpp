#include "decode/controlled_drafter.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>

#include "decode/elapsed.h"

namespace medusa {

namespace {

constexpr double kLearnRate = 0.2;  // weight of the newest timing in a running average
constexpr double kExploreShare = 0.03;  // of the time decoding, at most, spent re-measuring idle drafters (all of them)
constexpr int kExploreMinIdle = 8;      // steps
constexpr size_t kMaxShadows = 16;

double blend(double old, double now) { return old + kLearnRate * (now - old); }

}  // namespace

ControlledDrafter::ControlledDrafter(std::vector<Drafter*> drafters, CostModel costs, ControlOptions options)
    : costs_(std::move(costs)), options_(options) {
    if (drafters.empty()) throw std::invalid_argument("the step controller needs a drafter");
    if (costs_.verify.empty()) throw std::invalid_argument("the step controller needs the verify pass's costs");
    for (Drafter* d : drafters) {
        if (!d) throw std::invalid_argument("the step controller was given no drafter");
        members_.push_back({d, AcceptanceModel(d->evidence())});
    }
    kind_ = members_.size() > 1 ? DrafterKind::Auto : drafters[0]->kind();
    trace_.weighed = {ShapeOption{}};
}

void ControlledDrafter::before_prompt() {
    for (Member& m : members_) m.drafter->before_prompt();
}

void ControlledDrafter::begin(std::span<const int> prompt) {
    // What was learned (costs, acceptance) carries over: it belongs to the device and the model.
    for (Member& m : members_) m.drafter->begin(prompt);
    shadows_.clear();
    chosen_ = -1;
    fresh_ = first_step_ = true;
    last_propose_ = Clock::now();
}

std::vector<double> ControlledDrafter::path_prob(const Member& m, const CandidateTree& t) const {
    std::vector<double> p(size_t(t.size()), 1.0);
    for (int i = 1; i < t.size(); ++i)
        p[i] = p[size_t(t.parent[i])] * m.acceptance.node(t.depth[i], m.drafter->evidence_of(t, i));
    return p;
}

void ControlledDrafter::set_level_ms(size_t drafter, double ms) {
    Member& m = members_.at(drafter);
    m.draft_ms = m.last_ms = m.measured_ms = ms;
    m.timed = true;
}

void ControlledDrafter::set_stage_ms(size_t drafter, double ms) { members_.at(drafter).stage_ms = std::max(0.0, ms); }

double ControlledDrafter::verify_scale(int tokens, bool staged) const {
    double scale = 1.0;
    int distance = INT_MAX;
    for (const auto& [key, s] : verify_scale_) {
        // Another kind of pass counts only when this kind has none.
        const int d = std::abs(key.second - tokens) + (key.first == staged ? 0 : 1 << 20);
        if (d < distance) distance = d, scale = s;
    }
    return scale;
}

double ControlledDrafter::verify_ms(int tokens, const Member* staged) const {
    return (timing() ? verify_scale(tokens, staged != nullptr) : 1.0) * nominal_ms(tokens, staged);
}

void ControlledDrafter::learn_cost(Member& m, double ms) {
    if (!timing()) return;
    // A single slow proposal (the machine busy elsewhere) moves the average by a bounded step.
    m.draft_ms = m.timed ? blend(m.draft_ms, std::min(ms, 4.0 * m.draft_ms + 0.05)) : ms;
    m.timed = true;
}

namespace {

// A member whose tree its device stage drafts: its passes run the stage too.
template <class M>
const M* staged(const M& m, const CandidateTree& t) {
    return t.device_tokens ? &m : nullptr;
}

}  // namespace

CandidateTree ControlledDrafter::propose(const DraftContext& c) {
    if (fresh_) {
        sampling_ = c.sampler && !c.sampler->greedy();
        if (sampling_)
            for (Member& m : members_) m.acceptance = AcceptanceModel(m.drafter->evidence());
        fresh_ = false;
    }
    resolve_shadows(c.sequence);
    const auto now = Clock::now();
    const double step_ms = std::chrono::duration<double, std::milli>(now - last_propose_).count();
    last_propose_ = now;
    const int room = shape_sizes(std::max(1, c.max_nodes)).back();  // the largest block a step verifies
    const std::vector<int> member_of = weigh(c, room);
    choose_best();
    explore(member_of, step_ms);
    chosen_ = member_of[size_t(trace_.chosen)];
    CandidateTree tree = chosen_ >= 0 ? draft_chosen(c, room) : CandidateTree::root_only(c.sequence.back());
    shadow_the_rest(c.sequence.size());
    proposed_at_ = Clock::now();
    return tree;
}

std::vector<int> ControlledDrafter::weigh(const DraftContext& c, int room) {
    trace_ = ControlTrace{};
    trace_.weighed.push_back({DrafterKind::Plain, 1, 0, 1.0, verify_ms(1)});
    std::vector<int> member_of = {-1};  // per weighed option
    for (size_t i = 0; i < members_.size(); ++i) {
        Member& m = members_[i];
        Drafter& d = *m.drafter;
        m.proposed = false;
        m.kept.clear();
        if (d.cheap_proposal()) {
            DraftContext cc = c;
            cc.max_nodes = room;
            const auto t0 = Clock::now();
            m.tree = d.propose(cc);
            learn_cost(m, ms_since(t0));
            m.proposed = true;
            // What trying its smallest shape would cost: the proposal and a second verified token.
            const Member* stage = staged(m, m.tree);
            m.last_ms = draft_cost(m) + std::max(0.0, verify_ms(2, stage) - verify_ms(1));
            if (m.tree.size() <= 1) continue;
            // Greedy verification of host-drafted tokens can keep any subtree; sampled drafts
            // and device-drafted tokens only a prefix (the order they were drawn or laid out in).
            const bool any_subtree = !m.tree.device_tokens && !c.sample_drafts;
            const TreePlan plan = plan_tree(m.tree.parent, path_prob(m, m.tree), any_subtree,
                                            [&](int n) { return verify_ms(n, stage); }, draft_cost(m));
            m.kept = plan.kept;
            int depth = 0;
            for (int k : plan.kept) depth = std::max(depth, m.tree.depth[k]);
            trace_.weighed.push_back(
                {d.kind(), int(plan.kept.size()), depth, plan.expected_tokens, plan.expected_ms});
        } else {
            const int max_depth = std::min({d.depth_limit(), c.max_depth, room - 1});
            if (max_depth < 1) continue;
            std::vector<double> levels;
            for (int l = 1; l <= max_depth; ++l) levels.push_back(m.acceptance.level(l));
            // Before its first level it catches up on every token since it last drafted.
            const double catch_up = catch_up_ms(m);
            trace_.weighed.push_back(plan_levels(d.kind(), levels, draft_cost(m),
                                                 [&](int n) { return verify_ms(n) + catch_up; }, max_depth));
        }
        member_of.push_back(int(i));
    }
    return member_of;
}

void ControlledDrafter::choose_best() {
    // The option with the most expected tokens per ms from option `first` on.
    const auto best_from = [this](int first) {
        int best = first;
        for (int o = first + 1; o < int(trace_.weighed.size()); ++o)
            if (trace_.weighed[o].tokens_per_ms() > trace_.weighed[best].tokens_per_ms()) best = o;
        return best;
    };
    // Plain decoding unless a draft beats it.
    trace_.chosen = best_from(0);
    trace_.reason = trace_.chosen > 0           ? ControlReason::Pays
                    : trace_.weighed.size() > 1 ? ControlReason::NothingPays
                                                : ControlReason::NothingDrafted;
    if (options_.always_draft && trace_.reason == ControlReason::NothingPays) {
        trace_.chosen = best_from(1);
        trace_.reason = ControlReason::DraftedAnyway;
    }
}

void ControlledDrafter::explore(const std::vector<int>& member_of, double step_ms) {
    // A drafter left idle drafts one level now and then, so that its costs and acceptance are
    // measured again: as often as keeps that under kExploreShare of the time (host-drafted cheap
    // proposals are scored without being verified, and need no such turn).
    const int best = trace_.chosen;
    for (size_t i = 0; i < members_.size(); ++i)
        if (int(i) != member_of[size_t(best)] && members_[i].idle > 0) members_[i].idle_ms += step_ms;
    const double share = kExploreShare / double(members_.size());
    for (int o = 1; o < int(trace_.weighed.size()) && timing(); ++o) {
        Member& m = members_[size_t(member_of[o])];
        const bool scored_anyway = m.drafter->cheap_proposal() && !m.tree.device_tokens;
        // A model drafter first catches up on every token since it last drafted.
        const double cost = m.drafter->cheap_proposal() ? m.last_ms : std::max(m.last_ms, draft_cost(m) + catch_up_ms(m));
        if (o == best || scored_anyway || m.idle < kExploreMinIdle || m.idle_ms * share < cost) continue;
        // The option becomes the smallest shape, with what that is expected to give and cost.
        ShapeOption& x = trace_.weighed[o];
        x.depth = 1, x.nodes = 2;
        if (m.drafter->cheap_proposal()) {
            x.expected_tokens = 1.0 + m.acceptance.node(1, m.drafter->evidence_of(m.tree, 1));
            x.expected_ms = draft_cost(m) + verify_ms(2, staged(m, m.tree));
        } else {
            x.expected_tokens = 1.0 + m.acceptance.level(1);
            x.expected_ms = draft_cost(m) + verify_ms(2);
        }
        trace_.chosen = o;
        trace_.reason = ControlReason::Explore;
        return;
    }
}

CandidateTree ControlledDrafter::draft_chosen(const DraftContext& c, int room) {
    // (A cheap proposal is never sampled: n-gram continuations and Medusa's top-k are chosen
    // deterministically, so any part of them may be kept.)
    Member& m = members_[size_t(chosen_)];
    const ShapeOption& option = trace_.weighed[size_t(trace_.chosen)];
    const bool exploring = trace_.reason == ControlReason::Explore;
    if (m.drafter->cheap_proposal()) return m.tree.keep(exploring ? std::vector<int>{0, 1} : m.kept);
    DraftContext cc = c;
    cc.max_depth = option.depth;
    cc.max_nodes = room;
    const auto t0 = Clock::now();
    CandidateTree drafted = m.drafter->propose(cc);
    const double ms = ms_since(t0);
    m.proposed = true;
    m.last_ms = ms;
    learn_cost(m, ms / std::max(1, drafted.max_depth()));
    const bool sampled = std::any_of(drafted.child_q.begin(), drafted.child_q.end(),
                                     [](const std::vector<float>& q) { return !q.empty(); });
    if (exploring) return drafted.prefix(2);  // the first draft, whatever its value
    if (drafted.size() <= 1 || sampled) return drafted;
    // Now that the drafter's confidence in each node is known, keep what pays of it. Sampled
    // drafts are verified whole: keeping some by their values would bias the sample (a kept draw
    // must be a draw from q, not from its likelier part).
    const TreePlan plan = plan_tree(drafted.parent, path_prob(m, drafted), !drafted.device_tokens,
                                    [this](int n) { return verify_ms(n); },
                                    timing() ? ms : draft_cost(m) * drafted.max_depth());
    return drafted.keep(plan.kept);
}

void ControlledDrafter::shadow_the_rest(size_t sequence_length) {
    for (size_t i = 0; i < members_.size(); ++i) {
        Member& m = members_[i];
        m.idle = int(i) == chosen_ ? 0 : m.idle + 1;
        if (int(i) == chosen_) m.idle_ms = 0;
        // A host-drafted cheap proposal not verified is scored against what the text becomes.
        if (int(i) != chosen_ && m.proposed && m.tree.size() > 1 && !m.tree.device_tokens)
            add_shadow(i, m.tree, sequence_length);
    }
}

const DraftStage* ControlledDrafter::device_stage() const {
    return chosen_ >= 0 ? members_[size_t(chosen_)].drafter->device_stage() : nullptr;
}

void ControlledDrafter::verified(const VerifiedStep& step) {
    const double ms = ms_since(proposed_at_);
    const CandidateTree& t = step.tree;
    // The first pass after the prompt's prefill runs with cold caches (2-5 ms where the others
    // take 0.3 on lavapipe): it says nothing about the passes to come.
    if (timing() && !first_step_) {
        // One pass moves the scale by a bounded step: a pass the machine slowed down is not the norm.
        const Member* stage = chosen_ >= 0 && device_stage() && t.size() > 1 ? &members_[size_t(chosen_)] : nullptr;
        const bool staged = stage != nullptr;
        const double before = verify_scale(t.size(), staged);
        const double ratio = std::clamp(ms / nominal_ms(t.size(), stage), before / 2, before * 2);
        verify_scale_[{staged, t.size()}] = blend(before, ratio);
    }
    first_step_ = false;
    if (chosen_ >= 0 && t.size() > 1) {
        Member& m = members_[size_t(chosen_)];
        std::vector<bool> on_path(size_t(t.size()), false);
        for (int n : step.verdict.path) on_path[size_t(n)] = true;
        for (int i = 1; i < t.size(); ++i)
            if (on_path[size_t(t.parent[i])])
                m.acceptance.record_node(t.depth[i], m.drafter->evidence_of(t, i), on_path[size_t(i)]);
        m.acceptance.record_levels(t.max_depth(), step.accepted());
    }
    for (Member& m : members_)
        if (m.proposed) m.drafter->verified(step);
}

void ControlledDrafter::add_shadow(size_t member, const CandidateTree& t, size_t start) {
    Shadow s{member, start, {}, members_[member].drafter->evidence_of(t, 1)};
    for (int node = 0;;) {  // the first branch: each node's first child
        int next = -1;
        for (int i = node + 1; i < t.size() && next < 0; ++i)
            if (t.parent[i] == node) next = i;
        if (next < 0) break;
        s.tokens.push_back(t.token[next]);
        node = next;
    }
    if (shadows_.size() >= kMaxShadows) shadows_.erase(shadows_.begin());
    shadows_.push_back(std::move(s));
}

void ControlledDrafter::resolve_shadows(std::span<const int> sequence) {
    std::erase_if(shadows_, [&](const Shadow& s) {
        if (sequence.size() <= s.start) return false;
        const size_t seen = std::min(s.tokens.size(), sequence.size() - s.start);
        size_t hits = 0;
        while (hits < seen && sequence[s.start + hits] == s.tokens[hits]) ++hits;
        if (hits == seen && seen < s.tokens.size()) return false;  // the text has not got that far yet
        AcceptanceModel& a = members_[s.member].acceptance;
        for (size_t d = 0; d <= hits && d < s.tokens.size(); ++d) a.record_node(int(d) + 1, s.evidence, d < hits);
        a.record_levels(int(s.tokens.size()), int(hits));
        return true;
    });
}

uint64_t ControlledDrafter::submits() const {
    uint64_t n = 0;
    for (const Member& m : members_) n += m.drafter->submits();
    return n;
}

std::vector<PreparedBlock> ControlledDrafter::blocks_to_prepare() const {
    std::vector<PreparedBlock> out;
    for (const Member& m : members_) {
        int most = 1;
        for (const PreparedBlock& b : m.drafter->blocks_to_prepare()) most = std::max(most, b.tokens);
        for (int n : shape_sizes(most))
            if (n > 1) out.push_back({n, m.drafter->device_stage()});
    }
    return out;
}

}  // namespace medusa
