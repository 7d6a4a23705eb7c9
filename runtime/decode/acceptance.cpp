#include "decode/acceptance.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace medusa {

std::unique_ptr<AcceptanceRule> make_acceptance_rule(AcceptRule rule, float temperature, TypicalParams typical) {
    if (temperature <= 0 || rule == AcceptRule::Greedy) return std::make_unique<GreedyAcceptance>();
    if (rule == AcceptRule::Typical) return std::make_unique<TypicalAcceptance>(typical);
    return std::make_unique<SpeculativeSampling>();
}

namespace {

// The deepest node whose whole path passes; ties go to the larger likelihood (the sum of the
// path's log probabilities, as Medusa's evaluate_posterior breaks them), then to the earlier node.
std::vector<int> longest_passing_path(const CandidateTree& t, const std::vector<NodeVerdict>& v) {
    const int n = t.size();
    std::vector<int> len(n, -1);
    std::vector<double> ll(n, 0);
    len[0] = 0;
    int best = 0;
    for (int i = 1; i < n; ++i) {
        const int par = t.parent[i];
        if (len[par] < 0 || !v[i].passes) continue;
        len[i] = len[par] + 1;
        ll[i] = ll[par] + std::log(std::max(double(v[i].model_prob), 1e-30));
        if (len[i] > len[best] || (len[i] == len[best] && ll[i] > ll[best])) best = i;
    }
    return t.path_to(best);
}

}  // namespace

Verdict GreedyAcceptance::accept(const CandidateTree& t, NodeDistributions& p, Sampler&) {
    Verdict v;
    v.nodes.resize(t.size());
    std::vector<int> greedy(t.size(), -1);
    for (int i = 1; i < t.size(); ++i) {
        const int par = t.parent[i];
        if (greedy[par] < 0) greedy[par] = p.greedy(par);
        v.nodes[i].passes = t.token[i] == greedy[par] && p.in_vocabulary(t.token[i]);
        v.nodes[i].parent_greedy = greedy[par];
        v.nodes[i].tried = true;
        v.nodes[i].model_prob = p.raw_prob(par, t.token[i]);
    }
    v.path = longest_passing_path(t, v.nodes);
    v.bonus = greedy[v.path.back()] >= 0 ? greedy[v.path.back()] : p.greedy(v.path.back());
    return v;
}

Verdict TypicalAcceptance::accept(const CandidateTree& t, NodeDistributions& p, Sampler&) {
    Verdict v;
    v.nodes.resize(t.size());
    std::vector<float> limit(t.size(), -1.0f);
    for (int i = 1; i < t.size(); ++i) {
        const int par = t.parent[i];
        if (limit[par] < 0) limit[par] = std::min(params_.eps, params_.delta * std::exp(-p.entropy(par)));
        v.nodes[i].model_prob = p.prob(par, t.token[i]);
        v.nodes[i].limit = limit[par];
        v.nodes[i].passes = v.nodes[i].model_prob > limit[par];
        v.nodes[i].tried = true;
    }
    v.path = longest_passing_path(t, v.nodes);
    // The reference's fast path takes the greedy token after the accepted candidates
    // (generate_candidates with fast=True: torch.argmax(logits[:, -1])).
    v.bonus = p.greedy(v.path.back());
    return v;
}

float Residual::operator()(int token) {
    if (!r_.empty()) return r_[token];
    for (int x : removed_)
        if (x == token) return 0.0f;
    return float(p_.prob(node_, token) / std::max(1.0 - removed_mass_, 1e-30));
}

void Residual::materialize() {
    if (!r_.empty()) return;
    r_ = p_.p(node_);
    for (int x : removed_) r_[x] = 0;
    const double z = std::max(1.0 - removed_mass_, 1e-30);
    for (float& x : r_) x = float(x / z);
}

void Residual::remove(int token) {
    if (!r_.empty()) {
        double z = 0;
        r_[token] = 0;
        for (float x : r_) z += x;
        if (z > 0)
            for (float& x : r_) x = float(x / z);
        return;
    }
    for (int x : removed_)
        if (x == token) return;
    removed_mass_ += p_.prob(node_, token);
    removed_.push_back(token);
}

void Residual::subtract(const std::vector<float>& q) {
    materialize();
    double z = 0;
    for (size_t i = 0; i < r_.size(); ++i) z += r_[i] = std::max(0.0f, r_[i] - q[i]);
    if (z > 0)
        for (float& x : r_) x = float(x / z);
}

std::vector<float> Residual::weights() {
    materialize();
    return r_;
}

void SpeculativeSampling::reject(Residual& r, int x, const std::vector<float>& q) const {
    if (q.empty()) r.remove(x);
    else r.subtract(q);
}

namespace {

// The tokens to draw at a rejection: the drawn one, the rejected drafts, then those weighing most
// in p, q or the residual (each normalised), most likely under p first.
std::vector<RejectionBar> rejection_bars(const std::vector<float>& p, const std::vector<float>& q,
                                         const std::vector<float>& residual, const CandidateTree& t,
                                         const std::vector<int>& rejected, int drawn) {
    auto normalised = [](const std::vector<float>& v) {
        double z = 0;
        for (float x : v) z += x;
        std::vector<float> out(v.size());
        for (size_t i = 0; i < v.size(); ++i) out[i] = z > 0 ? float(v[i] / z) : 0.0f;
        return out;
    };
    const std::vector<float> pn = normalised(p), qn = normalised(q), rn = normalised(residual);
    auto at = [](const std::vector<float>& v, int tok) { return tok >= 0 && size_t(tok) < v.size() ? v[size_t(tok)] : 0.0f; };
    std::vector<int> picked;
    auto pick = [&](int tok) {
        if (tok >= 0 && size_t(tok) < pn.size() && std::find(picked.begin(), picked.end(), tok) == picked.end() &&
            int(picked.size()) < StepTrace::kRejectionBars)
            picked.push_back(tok);
    };
    pick(drawn);
    for (int c : rejected) pick(t.token[c]);
    std::vector<int> order(pn.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    auto weight = [&](int tok) { return std::max({at(pn, tok), at(qn, tok), at(rn, tok)}); };
    const size_t n = std::min(order.size(), size_t(StepTrace::kRejectionBars) * 2);
    std::partial_sort(order.begin(), order.begin() + long(n), order.end(),
                      [&](int a, int b) { return weight(a) > weight(b); });
    for (size_t i = 0; i < n; ++i) pick(order[i]);
    std::sort(picked.begin(), picked.end(), [&](int a, int b) { return at(pn, a) > at(pn, b); });
    std::vector<RejectionBar> bars;
    for (int tok : picked) bars.push_back({tok, at(pn, tok), at(qn, tok), at(rn, tok)});
    return bars;
}

}  // namespace

Verdict SpeculativeSampling::accept(const CandidateTree& t, NodeDistributions& p, Sampler& rng) {
    Verdict v;
    v.nodes.resize(t.size());
    for (int i = 1; i < t.size(); ++i) v.nodes[i].model_prob = p.prob(t.parent[i], t.token[i]);
    const auto children = t.children();
    int cur = 0;
    v.path = {0};
    for (;;) {
        Residual r(p, cur);
        const std::vector<float>& q_parent = t.child_q[cur];
        std::vector<float> q;   // the distribution the current child was drawn from
        double drawn_mass = 0;  // of q_parent, taken by earlier siblings (drawn without replacement)
        int next = -1;
        for (int c : children[cur]) {
            const int x = t.token[c];
            if (!p.in_vocabulary(x)) continue;  // a drafter's argmax of NaN: as if never proposed
            v.nodes[c].tried = true;
            float qx = 1.0f;
            if (!q_parent.empty()) {
                const double left = std::max(1.0 - drawn_mass, 1e-30);
                q.assign(q_parent.size(), 0.0f);
                for (size_t k = 0; k < q.size(); ++k) q[k] = float(q_parent[k] / left);
                for (int s : children[cur]) {
                    if (s == c) break;
                    if (p.in_vocabulary(t.token[s])) q[t.token[s]] = 0.0f;
                }
                qx = q[x];
            }
            // u < r(x) / q(x), written without the division (q(x) > 0 for a drawn token).
            const float u = rng.uniform(), rx = r(x);
            v.nodes[c].draw = u;
            v.nodes[c].ratio = qx > 0 ? rx / qx : 0.0f;
            if (u * qx < rx) {
                v.nodes[c].passes = true;
                next = c;
                break;
            }
            if (!q_parent.empty()) drawn_mass += q_parent[x];
            reject(r, x, q);
        }
        if (next < 0) {
            const std::vector<float> residual = r.weights();
            v.bonus = rng.draw(residual);
            if (!children[cur].empty()) v.rejection = rejection_bars(Residual(p, cur).weights(), q_parent, residual, t, children[cur], v.bonus);
            return v;
        }
        v.path.push_back(next);
        cur = next;
    }
}

}  // namespace medusa
