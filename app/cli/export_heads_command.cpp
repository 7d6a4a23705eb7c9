// `medusa export-heads`: Medusa heads from any layout this engine reads (ours, Medusa's .pt,
// legacy, vLLM) written for another tool: Medusa's own layout (f32) or TGI's (f16, with the base
// model's Hugging Face id).
#include <cstdio>

#include "commands.h"
#include "llm/medusa_heads_io.h"
#include "model/output_path.h"
#include "session.h"

namespace medusa::cli {

int run_export_heads(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("export-heads"));
    if (!args.has("--heads") || !args.has("--out")) throw UsageError("pass --heads FILE|DIR and --out DIR");
    const std::string layout = args.str("--layout", "medusa");
    if (layout != "medusa" && layout != "tgi") throw UsageError("--layout must be medusa or tgi, not '" + layout + "'");
    if (layout == "tgi" && !args.has("--base-model"))
        throw UsageError("--layout tgi needs --base-model ID: the base model's Hugging Face id, which TGI loads");
    check_output_folder(args.str("--out"));
    const ModelFile model = open_model(args);
    MedusaHeads heads = open_heads(args, model);
    // TGI serves heads without their own projection only with one residual block (its MedusaHeadV2);
    // deeper ones get the model's classifier written out.
    if (layout == "tgi" && heads.layers > 1) heads.copy_shared_classifier(model);
    save_medusa_heads(heads, args.str("--out"),
                      {layout == "tgi" ? HeadsExport::Tgi : HeadsExport::Medusa, args.str("--base-model")});
    std::fprintf(stderr, "wrote %d heads (%d residual blocks each%s) to %s in %s's layout\n", heads.count(), heads.layers,
                 heads.heads.front().w2.empty() ? ", sharing the model's classifier" : "", args.str("--out").c_str(),
                 layout == "tgi" ? "TGI" : "Medusa");
    return 0;
}

}  // namespace medusa::cli
