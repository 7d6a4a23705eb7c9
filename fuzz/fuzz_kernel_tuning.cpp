// libFuzzer target: kernel-tuning.json. Every entry of the file is looked up on devices of several
// subgroup and workgroup limits: one that is used must be a configuration that device can run
// (what matmul.comp needs: whole subgroups, within the device's largest workgroup, 1 to 4 rows),
// tuned under the device's subgroup size when the entry names one; one that is not gives a warning.
// A used configuration saved again (as `bench --tune-kernels` does) reads back the same.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_support.h"
#include "llm/kernel_tuning.h"
#include "model/json_file.h"
#include "model/model_file.h"
#include "model/runtime_warning.h"

using medusa::fuzz::check;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::optional<json> parsed = medusa::fuzz::json_input(data, size);
    if (!parsed || !parsed->is_object()) return 0;
    const json& j = *parsed;
    static int warnings;  // (static: the sink outlives this call)
    warnings = 0;
    medusa::set_warning_sink([](const std::string&) { ++warnings; });  // also forgets the last input's
    const medusa::MatmulLimits devices[] = {{8, 1024}, {32, 1024}, {64, 256}, {4, 128}};
    int entries = 0;
    bool refused = false;
    for (const auto& [device, models] : j.items()) {
        if (!models.is_object()) continue;
        for (const auto& [model, entry] : models.items()) {
            if (++entries > 64) break;  // each is looked up several times: a bound on the work
            for (const medusa::MatmulLimits& limits : devices) {
                const int before = warnings;
                const auto config = medusa::tuned_matmul(j, "fuzz.json", device, model, limits);
                refused = refused || !config;
                if (!config) continue;
                check(warnings == before);
                check(medusa::matmul_config_problem(*config, limits).empty());
                check(!entry.contains("subgroup") || entry["subgroup"] == limits.subgroup_size);
                const json saved = medusa::with_tuned_matmul(j, device, model, *config, limits.subgroup_size, entry);
                check(medusa::tuned_matmul(saved, "saved", device, model, limits) == config);
            }
        }
    }
    check(!refused || warnings > 0);  // (the same warning twice is given once)
    return 0;
}
