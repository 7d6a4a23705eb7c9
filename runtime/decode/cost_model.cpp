#include "decode/cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/model_file.h"

namespace medusa {

CostCurve::CostCurve(std::vector<std::pair<int, double>> points) : points_(std::move(points)) {
    for (size_t i = 0; i < points_.size(); ++i) {
        // (a pass of more than 10^7 ms, nearly three hours, is no measurement)
        if (points_[i].first < 1 || !(points_[i].second > 0) || !(points_[i].second <= 1e7))
            throw std::invalid_argument("a cost curve needs sizes >= 1 and times in (0, 1e7] ms");
        if (i > 0 && points_[i].first <= points_[i - 1].first)
            throw std::invalid_argument("a cost curve's sizes must increase");
    }
}

double CostCurve::at(int tokens) const {
    if (points_.empty()) return 1.0;
    if (points_.size() == 1 || tokens <= points_.front().first) return points_.front().second;
    // Between two measured sizes, or past the last along the last segment's slope (never down).
    size_t i = 1;
    while (i + 1 < points_.size() && points_[i].first < tokens) ++i;
    const auto [n0, ms0] = points_[i - 1];
    const auto [n1, ms1] = points_[i];
    const double slope = std::max(0.0, (ms1 - ms0) / double(n1 - n0));
    if (tokens >= n1) return ms1 + slope * (tokens - n1);
    return ms0 + (ms1 - ms0) * double(tokens - n0) / double(n1 - n0);
}

nlohmann::json CostModel::to_json() const {
    nlohmann::json v = nlohmann::json::array();
    for (const auto& [n, ms] : verify.points()) v.push_back({{"tokens", n}, {"ms", ms}});
    return {{"verify_ms", v}, {"position", position}};
}

CostModel CostModel::from_json(const nlohmann::json& j, const std::string& where) {
    auto bad = [&](const std::string& what) { return FormatError(where + ": " + what); };
    if (!j.is_object() || !j.contains("verify_ms") || !j["verify_ms"].is_array() || j["verify_ms"].empty())
        throw bad("a cost model needs \"verify_ms\": [{\"tokens\": N, \"ms\": T}, ...]");
    std::vector<std::pair<int, double>> points;
    for (const auto& p : j["verify_ms"]) {
        if (!p.is_object() || !p.contains("tokens") || !p["tokens"].is_number_integer() || !p.contains("ms") ||
            !p["ms"].is_number())
            throw bad("each verify_ms entry needs \"tokens\" (an integer) and \"ms\" (a number)");
        const long long n = p["tokens"].get<long long>();
        if (n < 1 || n > 4096) throw bad("verify_ms: " + std::to_string(n) + " tokens is out of range");
        points.push_back({int(n), p["ms"].get<double>()});
    }
    CostModel m;
    try {
        m.verify = CostCurve(std::move(points));
    } catch (const std::invalid_argument& e) {
        throw bad(e.what());
    }
    if (j.contains("position") && j["position"].is_number_integer()) m.position = j["position"].get<int>();
    m.source = where;
    return m;
}

}  // namespace medusa
