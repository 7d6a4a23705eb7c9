// What a step costs on this device for this model: the target's verify pass by block size,
// measured once (runtime/setup/cost_measurement.h) and cached per device, driver and model.
// The step controller weighs every draft shape against it; what it cannot know in advance (a
// drafter's own time per level, how this run's verify passes compare with the measurement) it
// learns while decoding.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace medusa {

// Milliseconds by block size, linear between the measured sizes and beyond the largest.
class CostCurve {
public:
    CostCurve() = default;
    explicit CostCurve(std::vector<std::pair<int, double>> points);  // sorted by size, sizes >= 1, ms > 0
    double at(int tokens) const;
    bool empty() const { return points_.empty(); }
    const std::vector<std::pair<int, double>>& points() const { return points_; }

private:
    std::vector<std::pair<int, double>> points_;
};

struct CostModel {
    CostCurve verify;      // the target's verify pass of T tokens, statistics included (T > 1)
    int position = 0;      // the cache position it was measured at
    std::string source;    // "measured", "cache FILE" or "synthetic" (tests)
    // A pass of T tokens against one: what a drafted token must earn back.
    double verify_ratio(int tokens) const { return verify.at(tokens) / verify.at(1); }
    nlohmann::json to_json() const;
    // Throws FormatError naming `where` when the entry is malformed.
    static CostModel from_json(const nlohmann::json& j, const std::string& where);
};

}  // namespace medusa
