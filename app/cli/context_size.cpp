#include "context_size.h"

#include <algorithm>
#include <cstdio>

namespace medusa::cli {

int context_size(const Args& args, const ModelFile& model, int needed) {
    const int trained = model.config.seq_len;
    const int requested = args.integer("--ctx-size", 0);
    if (args.has("--ctx-size") && requested < 1)
        throw UsageError("--ctx-size must be at least 1, got " + std::to_string(requested));
    if (requested > trained)
        std::fprintf(stderr,
                     "warning: --ctx-size %d is past the %d positions %s was trained for; text past them may "
                     "degrade\n",
                     requested, trained, model.path.c_str());
    return choose_context(requested, trained, needed);
}

int draft_context_size(int target_context, const LlamaConfig& draft) {
    return std::min(target_context, draft.seq_len);
}

}  // namespace medusa::cli
