// Built-in seed prompts for self-distillation: varied openings (stories, dialogue, facts,
// instructions, lists) so the model's own continuations cover more than one register.
#pragma once
#include <string>
#include <vector>

namespace medusa::train {
const std::vector<std::string>& seed_prompts();
}  // namespace medusa::train
