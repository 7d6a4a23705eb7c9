// The tree panel's layout checks: overlapping boxes or labels, ones past the visible area, and
// edges crossing a box that is not one of their ends are counted; touching is no overlap.
#include <catch2/catch.hpp>

#include "tree_audit.h"

using namespace medusa::chat;

TEST_CASE("the tree audit counts overlaps, clipping and edges through boxes", "[chat]") {
    TreeAudit a;
    a.clear({0, 0, 100, 100}, {0, 0, 100, 100});
    a.box(0, {10, 10, 30, 20}, false);
    a.box(1, {30, 10, 50, 20}, true);   // touches box 0: no overlap; its text was cut
    a.box(2, {45, 15, 60, 25}, false);  // overlaps box 1
    a.label({90, 90, 110, 95});         // reaches past the right edge
    a.edge(0, 1, 20, 15, 40, 15);       // between its own ends: crosses nothing else
    a.edge(0, 2, 20, 15, 70, 18);       // from box 0 across to box 2: passes through box 1
    a.edge(0, 3, 20, 15, 20, 80);       // straight down: crosses nothing
    TreeAuditCounts c = a.count();
    CHECK(c.boxes == 3);
    CHECK(c.labels == 1);
    CHECK(c.overlaps == 1);
    CHECK(c.clipped == 1);
    CHECK(c.edges_through_boxes == 1);
    CHECK(c.cut_text == 1);
    a.clear({0, 0, 100, 100}, {0, 0, 100, 100});
    c = a.count();
    CHECK(c.boxes == 0);
    CHECK(c.overlaps == 0);
}

TEST_CASE("what a scrolling view reaches by scrolling is out of view, not clipped", "[chat]") {
    TreeAudit a;
    a.clear({0, 0, 100, 100}, {0, 0, 300, 100});  // the view shows the first third of what it scrolls over
    a.box(0, {10, 10, 30, 20}, false);    // in view
    a.box(1, {90, 10, 110, 20}, false);   // across the view's edge
    a.box(2, {200, 10, 220, 20}, false);  // further right
    a.label({290, 10, 310, 20});          // past what the view scrolls over: never seen whole
    const TreeAuditCounts c = a.count();
    CHECK(c.out_of_view == 2);
    CHECK(c.clipped == 1);
}
