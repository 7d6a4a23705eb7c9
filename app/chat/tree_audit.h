// What the tree panel drew in one frame, checked for the glitches a reader sees: node boxes and
// labels (the "+n" counts, rejection notes, row labels) as rectangles, the edges as segments.
// Counted: pairs of boxes or labels that overlap, boxes or labels reaching past what the tree's
// view scrolls over (cut off) or past its visible part (out of view), edges that cross a box other
// than their two ends, and boxes whose token text did not fit. --screenshot's JSON reports the counts, so the screenshot tests fail on them.
#pragma once
#include <vector>

namespace medusa::chat {

struct AuditRect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

struct TreeAuditCounts {
    int boxes = 0, labels = 0;
    int overlaps = 0;             // pairs of boxes or labels that overlap
    int clipped = 0;              // boxes or labels not wholly inside what the view scrolls over: never seen whole
    int out_of_view = 0;          // boxes or labels reached by scrolling: not wholly in view
    int edges_through_boxes = 0;  // edges crossing a box that is not one of their ends
    int cut_text = 0;             // boxes whose token text was cut to fit
};

class TreeAudit {
public:
    // `visible`: the view's inside; `content`: what it scrolls over.
    void clear(AuditRect visible, AuditRect content);
    // `node`: the tree node the box stands for (edges name their ends by it).
    void box(int node, AuditRect r, bool text_cut);
    void label(AuditRect r);
    void edge(int from_node, int to_node, float ax, float ay, float bx, float by);
    TreeAuditCounts count() const;

private:
    struct Box {
        int node;
        AuditRect r;
    };
    struct Edge {
        int from, to;
        float ax, ay, bx, by;
    };
    AuditRect visible_, content_;
    std::vector<Box> boxes_;
    std::vector<AuditRect> labels_;
    std::vector<Edge> edges_;
    int cut_text_ = 0;
};

}  // namespace medusa::chat
