// libFuzzer target: a cost model entry of cost-model.json (the verify pass's milliseconds by block
// size). One that loads must give a finite, positive cost for every block size, never less for a
// larger block past the last measured one, and read the same after a round trip through JSON.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "decode/cost_model.h"
#include "fuzz_support.h"
#include "model/json_file.h"
#include "model/model_file.h"

using medusa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    std::optional<medusa::CostModel> m;
    try {
        m = medusa::CostModel::from_json(medusa::parse_json_text(text, text + size, "fuzz.json"), "fuzz.json");
    } catch (const medusa::FormatError&) {
        return 0;
    }
    const int last = m->verify.points().back().first;
    for (int n = 1; n <= 4200; n += n < 200 ? 1 : 97) {
        const double ms = m->verify.at(n);
        check(std::isfinite(ms) && ms > 0);
        if (n > last) check(ms >= m->verify.at(last));
    }
    const medusa::CostModel back = medusa::CostModel::from_json(m->to_json(), "round trip");
    for (const auto& [n, ms] : m->verify.points()) check(back.verify.at(n) == ms);
    return 0;
}
