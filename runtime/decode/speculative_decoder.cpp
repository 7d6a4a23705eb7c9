#include "decode/speculative_decoder.h"

#include <algorithm>
#include <chrono>

#include "decode/elapsed.h"

namespace medusa {

namespace {

// Keeps `emitted` up to the first stop token (which ends the generation and is not emitted)
// and within the budget; returns false when a stop token ended it.
bool keep_step_tokens(std::vector<int>& emitted, const DecodeOptions& o, GenerationStats& stats) {
    size_t kept = 0;
    bool stopped = false;
    for (; kept < emitted.size(); ++kept) {
        if (std::find(o.stop_tokens.begin(), o.stop_tokens.end(), emitted[kept]) != o.stop_tokens.end()) {
            stats.stop_reason = StopReason::StopToken;
            stopped = true;
            break;
        }
        if (stats.new_tokens + int(kept) >= o.max_new_tokens) break;
    }
    emitted.resize(kept);
    stats.new_tokens += int(kept);
    return !stopped;
}

// The step as the trace files and the app show it, assembled from what the verifier accepted.
StepTrace trace_of(const VerifiedStep& v, DrafterKind drafter, AcceptRule rule) {
    StepTrace tr;
    tr.base = v.base;
    tr.drafter = drafter;
    tr.rule = rule;
    tr.path = v.verdict.path;
    tr.accepted = v.accepted();
    tr.bonus = v.verdict.bonus;
    tr.emitted = v.tokens;
    tr.logprobs = v.logprobs;
    const CandidateTree& t = v.tree;
    for (int i = 0; i < t.size(); ++i) {
        const NodeVerdict& nv = v.verdict.nodes[i];
        TreeNodeTrace n;
        n.token = t.token[i];
        n.parent = t.parent[i];
        n.depth = t.depth[i];
        n.rank = t.rank[i];
        n.draft_prob = t.q[i];
        n.sampled = i > 0 && !t.child_q[t.parent[i]].empty();
        n.model_prob = nv.model_prob;
        n.limit = nv.limit;
        n.parent_greedy = nv.parent_greedy;
        n.draw = nv.draw;
        n.ratio = nv.ratio;
        n.passes = i == 0 || nv.passes;
        n.tried = i == 0 || nv.tried;
        tr.nodes.push_back(n);
    }
    for (int node : v.verdict.path) tr.nodes[node].accepted = true;
    tr.rejection = v.verdict.rejection;
    return tr;
}

}  // namespace

void GenerationStats::add(const GenerationStats& o) {
    new_tokens += o.new_tokens;
    steps += o.steps;
    drafted += o.drafted;
    drafted_steps += o.drafted_steps;
    accepted += o.accepted;
    submits += o.submits;
    prefill_ms += o.prefill_ms;
    decode_ms += o.decode_ms;
    stop_reason = o.stop_reason;
}

SpeculativeDecoder::SpeculativeDecoder(TreeRunner& runner, Drafter& drafter, DecodeOptions options)
    : runner_(runner),
      drafter_(drafter),
      options_(std::move(options)),
      rule_(make_acceptance_rule(options_.rule, options_.sampling.temperature, options_.typical)),
      verifier_(runner, *rule_) {
    verifier_.set_logprobs(options_.logprobs);
    prepare_blocks();
}

void SpeculativeDecoder::prepare_blocks() {
    // Every block a step may verify, recorded now rather than during the first steps.
    runner_.prepare(1, nullptr);  // every generation's first step: the root alone
    for (const PreparedBlock& b : drafter_.blocks_to_prepare()) runner_.prepare(b.tokens, b.stage);
}

void SpeculativeDecoder::set_rule(std::unique_ptr<AcceptanceRule> rule) {
    rule_ = std::move(rule);
    verifier_.set_rule(*rule_);
}

GenerationStats SpeculativeDecoder::generate(const std::vector<int>& prompt,
                                             const std::function<bool(const StepTrace&)>& on_step) {
    GenerationStats stats;
    stats.prompt_tokens = int(prompt.size());
    stats.stop_reason = StopReason::Length;
    Sampler sampler(options_.sampling);  // the generation's one random stream
    auto t0 = Clock::now();
    drafter_.before_prompt();
    prepare_blocks();  // again where before_prompt changed what the target keeps: not in the decode time
    verifier_.start(prompt);
    drafter_.begin(prompt);
    stats.prefill_ms = ms_since(t0);

    t0 = Clock::now();
    std::vector<int> sequence = prompt;
    const int context = runner_.config().seq_len;
    for (int step = 1; stats.new_tokens < options_.max_new_tokens; ++step) {
        if (verifier_.base() >= context) {
            stats.stop_reason = StopReason::Context;
            break;
        }
        DraftContext c;
        c.sequence = sequence;
        c.base = verifier_.base();
        c.max_nodes = std::min(verifier_.room(), TokenBlock::kMaxTokens);
        c.max_depth = std::max(0, options_.max_new_tokens - stats.new_tokens - 1);
        c.sampler = &sampler;
        c.sample_drafts = rule_->samples_drafts();
        const uint64_t submits_before = runner_.submits() + drafter_.submits();
        const auto ts = Clock::now();
        const CandidateTree tree = drafter_.propose(c);
        const VerifiedStep verified = verifier_.step(tree, drafter_.device_stage(), sequence, sampler);
        const ControlTrace* control = drafter_.control();
        StepTrace tr = trace_of(verified, control ? control->choice().drafter : drafter_.kind(), rule_->kind());
        if (control) tr.control = *control;
        tr.wall_ms = ms_since(ts);
        tr.step = step;
        tr.stage_ms = runner_.stage_ms();
        tr.submits = int(runner_.submits() + drafter_.submits() - submits_before);
        drafter_.verified(verified);
        ++stats.steps;
        stats.submits += tr.submits;
        stats.drafted += tree.max_depth();
        stats.drafted_steps += tree.max_depth() > 0;
        stats.accepted += tr.accepted;
        const bool go_on = keep_step_tokens(tr.emitted, options_, stats);
        if (tr.logprobs.size() > tr.emitted.size()) tr.logprobs.resize(tr.emitted.size());
        sequence.insert(sequence.end(), tr.emitted.begin(), tr.emitted.end());
        if (!on_step(tr)) {
            stats.stop_reason = StopReason::Cancelled;
            break;
        }
        if (!go_on) break;
    }
    stats.decode_ms = ms_since(t0);
    return stats;
}

}  // namespace medusa
