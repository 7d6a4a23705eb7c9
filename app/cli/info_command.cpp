// `medusa info`: the Vulkan devices, and with -m the model's configuration and tensors.
#include <cstdio>
#include <map>

#include "commands.h"
#include "session.h"

namespace medusa::cli {

int run_info(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("info"));
    auto devices = gpu::list_devices();
    std::printf("Vulkan devices:\n");
    for (const auto& d : devices)
        std::printf("  [%u] %s (%s, %s) driver %s, Vulkan %s, %.1f GiB device-local, subgroup %u%s\n", d.index,
                    d.name.c_str(), d.vendor.c_str(), gpu::device_kind_name(d.kind), d.driver.c_str(), d.api_version.c_str(),
                    double(d.device_local_bytes) / (1 << 30), d.subgroup_size, d.float16 ? ", float16" : "");
    if (devices.empty())
        std::printf("  none: install your GPU's Vulkan driver, or mesa-vulkan-drivers for the CPU driver (lavapipe);\n"
                    "  --cpu runs the C++ reference without Vulkan\n");
    if (!args.has("--model") && !args.has("--synthetic")) return 0;

    ModelFile m = open_model(args);
    const LlamaConfig& c = m.config;
    std::printf("\nmodel %s (%s)\n", m.path.c_str(), m.format.c_str());
    std::printf("  dim %d, hidden %d, layers %d, heads %d, kv heads %d, head dim %d, vocab %d, context %d\n", c.dim,
                c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim(), c.vocab_size, c.seq_len);
    std::printf("  rope theta %g, rms eps %g, classifier %s\n", c.rope_theta, c.rms_eps,
                c.tied_classifier ? "tied to the embedding" : "separate");
    int64_t params = 0;
    size_t bytes = 0;
    std::map<std::string, int> types;
    for (const auto& t : m.tensors) {
        params += t.numel();
        bytes += t.nbytes;
        types[dtype_name(t.type)]++;
    }
    std::printf("  %zu tensors, %lld parameters, %.2f MiB of weights:", m.tensors.size(), (long long)params,
                double(bytes) / (1 << 20));
    for (const auto& [t, n] : types) std::printf(" %d %s", n, t.c_str());
    const EmbeddedVocab& v = m.embedded_tokenizer;
    if (v.empty()) std::printf("\n  tokenizer: none embedded\n");
    else if (v.bpe)
        std::printf("\n  tokenizer: embedded byte-level BPE, %zu tokens, %zu merges, pre-tokenizer %s\n", v.bpe->tokens.size(),
                    v.bpe->merges.size(), v.bpe->pre.c_str());
    else std::printf("\n  tokenizer: embedded sentencepiece vocabulary\n");
    return 0;
}

}  // namespace medusa::cli
