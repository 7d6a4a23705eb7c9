// The cost model of a target on its device: measured in a few seconds the first time a model is
// decoded on a device (with progress), then read from the cache, keyed as the kernel tuning is:
//   $MEDUSA_CACHE/cost-model.json (else ~/.cache/medusa-vk/cost-model.json)
//   { "<device> | <driver>": { "<weights> <dim>x<hidden>x<layers> v<vocab> ctx<context>": {...} } }
// `bench` and `tune-tree` measure it again and replace the entry.
#pragma once
#include <functional>
#include <string>

#include "decode/cost_model.h"
#include "setup/drafting_target.h"

namespace medusa {

using Progress = std::function<void(const std::string&)>;

std::string cost_model_path();
// The key of a target in the cache ("cpu reference" for the C++ engine's device).
std::string cost_device_key(const DraftingTarget& target);
std::string cost_model_key(const DraftingTarget& target);

// Times the target's verify pass (statistics included, as a drafted step runs it) for block
// sizes 1..max_tokens at a quarter of the context: the lower quartile of 3 to 12 rounds over all
// sizes (more rounds while they take under 1.5 s), each size's pass timed after one of its own.
CostModel measure_costs(TreeRunner& runner, int max_tokens, const Progress& progress = {});

// A level of a model drafter: a one-token forward of the draft model, or a run of EAGLE's layer
// over `width` tokens (a level's frontier); the lower quartile of a few. Decoding starts over
// afterwards (both drafters catch up from the prompt), so the slots they wrote do not matter.
double draft_level_ms(LanguageModel& draft);
double eagle_level_ms(EagleRunner& eagle, int width);
// What a drafting stage (Medusa's heads) adds to a verify pass of `tokens`: passes timed with
// and without it.
double stage_ms(TreeRunner& runner, const DraftStage& stage, int tokens);

enum class CostRefresh { UseCache, Remeasure };
// A drafter's own cost (per level; a stage's per pass), cached beside the target's curve under
// "drafter <key>" ("draft f32 64x172x5 v512", "eagle f32 64x172x5 v512 top-8", "medusa f32
// 64x172x5 v512 heads 4 top-2"); `measure` makes it when missing.
double drafter_cost_ms(const DraftingTarget& target, const std::string& key, const std::function<double()>& measure,
                        CostRefresh refresh = CostRefresh::UseCache);
// The cached entry for the target, else a new measurement, which is saved. A cache file that
// cannot be read is set aside and one that cannot be written left as it is, each with a warning
// (setup/cost_cache.h): the run goes on.
CostModel target_costs(const DraftingTarget& target, CostRefresh refresh = CostRefresh::UseCache,
                       const Progress& progress = {});

}  // namespace medusa
