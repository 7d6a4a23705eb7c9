// `medusa info`: the Vulkan devices, and with -m the model's configuration, tensors, tokenizer
// and chat template.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "commands.h"
#include "model/chat_template.h"
#include "terminal_text.h"
#include "session.h"

namespace medusa::cli {

int run_info(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("info"));
    auto devices = gpu::list_devices();
    std::printf("Vulkan devices:\n");
    for (const auto& d : devices)
        std::printf("  [%u] %s (%s, %s) driver %s, Vulkan %s, %.1f GiB device-local, subgroup %u%s%s\n", d.index,
                    d.name.c_str(), d.vendor.c_str(), gpu::device_kind_name(d.kind), d.driver.c_str(), d.api_version.c_str(),
                    double(d.device_local_bytes) / (1 << 30), d.subgroup_size, d.float16 ? ", float16" : "",
                    d.cooperative_matrix ? ", cooperative matrices (16x16x16 f16)" : "");
    if (devices.empty())
        std::printf("  none: install your GPU's Vulkan driver, or mesa-vulkan-drivers for the CPU driver (lavapipe);\n"
                    "  --cpu runs the C++ reference without Vulkan\n");
    if (!args.has("--model") && !args.has("--synthetic")) return 0;

    ModelFile m = open_model(args);
    const LlamaConfig& c = m.config;
    std::printf("\nmodel %s (%s, %s)\n", m.path.c_str(), format_name(m.format), family_name(c.arch.family));
    std::printf("  dim %d, hidden %d, layers %d, heads %d, kv heads %d, head dim %d, vocab %d, context %d\n", c.dim,
                c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim(), c.vocab_size, c.seq_len);
    std::printf("  rope theta %g", c.rope_theta);
    if (c.rope_position_scale != 1.0f) std::printf(" (linear scaling %g)", c.rope_position_scale);
    std::printf(", rms eps %g, classifier %s\n", c.rms_eps, c.tied_classifier ? "tied to the embedding" : "separate");
    std::printf("  features: %s\n", describe_features(c).c_str());
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
    // The chat template: the format it is spoken to in (what `generate --chat` and the app use) and
    // where that was found; a GGUF's own Jinja text below it, as the file holds it.
    try {
        const ChatTemplateDetection chat = detect_chat_template(m);
        std::printf("  chat template: %s (%s)\n", chat_template_name(chat.kind), terminal_safe(chat.reason).c_str());
    } catch (const std::exception& e) {  // a folder's tokenizer_config.json that does not read: the rest still shows
        std::printf("  chat template: unknown (%s)\n", terminal_safe(e.what()).c_str());
    }
    if (!m.chat_template.empty()) {
        constexpr size_t kShown = 4096;  // a template is a few hundred bytes; a hostile one is cut
        std::printf("  tokenizer.chat_template (%zu bytes%s):\n", m.chat_template.size(),
                    m.chat_template.size() > kShown ? ", the first 4096 shown" : "");
        const std::string_view jinja = std::string_view(m.chat_template).substr(0, kShown);
        for (size_t at = 0; at <= jinja.size();) {  // line by line, each made safe to print
            const size_t end = std::min(jinja.find('\n', at), jinja.size());
            std::printf("    %s\n", terminal_safe(jinja.substr(at, end - at)).c_str());
            at = end + 1;
        }
    }
    return 0;
}

}  // namespace medusa::cli
