#include "tree_audit.h"

#include <algorithm>

namespace medusa::chat {

namespace {

constexpr float kSlack = 1.0f;  // touching at an edge, or a border's antialiasing, is no overlap

bool overlap(const AuditRect& a, const AuditRect& b) {
    return a.x0 + kSlack < b.x1 && b.x0 + kSlack < a.x1 && a.y0 + kSlack < b.y1 && b.y0 + kSlack < a.y1;
}

bool inside(const AuditRect& r, const AuditRect& v) {
    return r.x0 >= v.x0 - kSlack && r.y0 >= v.y0 - kSlack && r.x1 <= v.x1 + kSlack && r.y1 <= v.y1 + kSlack;
}

// Whether the segment a-b passes through the rectangle shrunk by kSlack (Liang-Barsky clipping).
bool crosses(float ax, float ay, float bx, float by, const AuditRect& r) {
    const float x0 = r.x0 + kSlack, y0 = r.y0 + kSlack, x1 = r.x1 - kSlack, y1 = r.y1 - kSlack;
    if (x0 >= x1 || y0 >= y1) return false;
    float t0 = 0, t1 = 1;
    const float dx = bx - ax, dy = by - ay;
    const float p[4] = {-dx, dx, -dy, dy}, q[4] = {ax - x0, x1 - ax, ay - y0, y1 - ay};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return false;
            continue;
        }
        const float t = q[i] / p[i];
        if (p[i] < 0) t0 = std::max(t0, t);
        else t1 = std::min(t1, t);
        if (t0 > t1) return false;
    }
    return true;
}

}  // namespace

void TreeAudit::clear(AuditRect visible, AuditRect content) {
    visible_ = visible;
    content_ = content;
    boxes_.clear();
    labels_.clear();
    edges_.clear();
    cut_text_ = 0;
}

void TreeAudit::box(int node, AuditRect r, bool text_cut) {
    boxes_.push_back({node, r});
    cut_text_ += text_cut;
}

void TreeAudit::label(AuditRect r) { labels_.push_back(r); }

void TreeAudit::edge(int from_node, int to_node, float ax, float ay, float bx, float by) {
    edges_.push_back({from_node, to_node, ax, ay, bx, by});
}

TreeAuditCounts TreeAudit::count() const {
    TreeAuditCounts c;
    c.boxes = int(boxes_.size());
    c.labels = int(labels_.size());
    c.cut_text = cut_text_;
    std::vector<AuditRect> all;
    for (const Box& b : boxes_) all.push_back(b.r);
    all.insert(all.end(), labels_.begin(), labels_.end());
    for (size_t i = 0; i < all.size(); ++i) {
        c.clipped += !inside(all[i], content_);
        c.out_of_view += inside(all[i], content_) && !inside(all[i], visible_);
        for (size_t j = i + 1; j < all.size(); ++j) c.overlaps += overlap(all[i], all[j]);
    }
    for (const Edge& e : edges_)
        for (const Box& b : boxes_)
            if (b.node != e.from && b.node != e.to && crosses(e.ax, e.ay, e.bx, e.by, b.r)) ++c.edges_through_boxes;
    return c;
}

}  // namespace medusa::chat
