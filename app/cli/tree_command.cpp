// `medusa tree CHOICES`: the buffers a tree gives, in the reference implementation's layout.
#include <cstdio>

#include "commands.h"
#include "session.h"

namespace medusa::cli {

int run_tree(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("tree"));
    if (args.positional().size() != 1)
        throw UsageError("usage: medusa tree CHOICES.json|PRESET|dense:W,..|chain:N [--topk K]");
    try {
        const int topk = args.integer("--topk", 10);
        TreeBuffers b = build_tree_buffers(load_tree(args.positional()[0]), topk);
        std::printf("%s\n", tree_buffers_json(b).c_str());
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    return 0;
}

}  // namespace medusa::cli
