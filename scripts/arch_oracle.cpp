// arch_oracle: llama.cpp's (libllama's) greedy ids and logits for a GGUF file, as JSON; or a quantized
// copy of an F32 GGUF made with llama_model_quantize (what llama-quantize does, default type mixture).
//
// Test-fixture tool only, not part of the build: scripts/make_arch_fixtures.py compiles it against a
// prebuilt libllama (llama.cpp commit de3ff81) and runs it. It is never linked into the project.
//
//   arch_oracle run      BACKEND.so MODEL.gguf N_CTX N_NEW TOK,TOK,...   > out.json   (log on stderr)
//   arch_oracle quantize BACKEND.so IN.gguf OUT.gguf q8_0|q4_0
//
// run: CPU backend BACKEND.so (a ggml CPU variant, loaded explicitly), 1 thread, K and V caches F32,
// flash attention off, n_batch = n_ubatch = N_CTX, swa_full false. The prompt is decoded as one batch, then N_NEW
// greedy tokens (argmax, ties to the lowest id) are produced, one llama_decode per token after the
// first. Prints the ids, the 512 (n_vocab) logits at every step (step 0 = last prompt position), and
// the context sizes llama.cpp actually used (llama_n_ctx, llama_n_ctx_seq: it pads n_ctx to 256).
//
// With ARCH_ORACLE_DUMP=FILE set, run also writes, for the prompt's decode only, the F32 tensors
// llama.cpp's graph names ffn_gate-IL, ffn_up-IL and ffn_geglu-IL (the GELU-gated FFN's inputs and
// output) to FILE, each as: name (64 bytes, NUL-padded), ne0, ne1 (int64), ne0*ne1 floats. This checks
// ggml-cpu's GELU lookup table element by element.
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static void log_cb(enum ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) {
        fputs(level == GGML_LOG_LEVEL_WARN ? "[warning] " : "[error] ", stderr);
    }
    fputs(text, stderr);
}

struct dump_state {
    FILE * f      = nullptr;
    bool   active = false;
};

static bool dump_cb(struct ggml_tensor * t, bool ask, void * user_data) {
    auto * st = (dump_state *) user_data;
    const bool wanted = st->active && t->type == GGML_TYPE_F32 &&
                        (strncmp(t->name, "ffn_gate-", 9) == 0 || strncmp(t->name, "ffn_up-", 7) == 0 ||
                         strncmp(t->name, "ffn_geglu-", 10) == 0);
    if (ask) {
        return wanted;
    }
    if (wanted) {
        char name[64] = {0};
        strncpy(name, t->name, sizeof(name) - 1);
        const int64_t ne[2] = {t->ne[0], t->ne[1]};
        fwrite(name, 1, sizeof(name), st->f);
        fwrite(ne, sizeof(int64_t), 2, st->f);
        for (int64_t i1 = 0; i1 < t->ne[1]; ++i1) {  // row by row: views may have padded strides
            fwrite((const char *) t->data + i1 * t->nb[1], sizeof(float), (size_t) t->ne[0], st->f);
        }
    }
    return true;
}

static int usage() {
    fprintf(stderr,
            "usage: arch_oracle run BACKEND.so MODEL.gguf N_CTX N_NEW TOK,TOK,...\n"
            "       arch_oracle quantize BACKEND.so IN.gguf OUT.gguf q8_0|q4_0\n");
    return 2;
}

static void print_floats(const float * v, int n) {
    putchar('[');
    for (int i = 0; i < n; ++i) {
        // %.9g round-trips every float32 exactly
        printf(i ? ", %.9g" : "%.9g", (double) v[i]);
    }
    putchar(']');
}

static int cmd_quantize(const char * in, const char * out, const char * type) {
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    if (strcmp(type, "q8_0") == 0) {
        qp.ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    } else if (strcmp(type, "q4_0") == 0) {
        qp.ftype = LLAMA_FTYPE_MOSTLY_Q4_0;
    } else {
        return usage();
    }
    qp.nthread = 1;
    const uint32_t rc = llama_model_quantize(in, out, &qp);
    if (rc != 0) {
        fprintf(stderr, "arch_oracle: llama_model_quantize failed (%u)\n", rc);
        return 1;
    }
    return 0;
}

static int cmd_run(const char * model_path, int n_ctx, int n_new, const char * prompt_str) {
    std::vector<llama_token> prompt;
    for (const char * p = prompt_str; *p;) {
        char * end = nullptr;
        prompt.push_back((llama_token) strtol(p, &end, 10));
        p = (*end == ',') ? end + 1 : end;
    }
    if (prompt.empty() || n_new < 1 || n_ctx < (int) prompt.size() + n_new) {
        return usage();
    }

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "arch_oracle: failed to load %s\n", model_path);
        return 1;
    }

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx           = (uint32_t) n_ctx;
    cp.n_batch         = (uint32_t) n_ctx;
    cp.n_ubatch        = (uint32_t) n_ctx;
    cp.n_seq_max       = 1;
    cp.n_threads       = 1;
    cp.n_threads_batch = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k          = GGML_TYPE_F32;
    cp.type_v          = GGML_TYPE_F32;
    cp.no_perf         = true;
    cp.swa_full        = false;  // llama.cpp's tools' default (libllama's is true, with a warning)
    dump_state dump;
    if (const char * path = getenv("ARCH_ORACLE_DUMP")) {
        dump.f = fopen(path, "wb");
        if (!dump.f) {
            fprintf(stderr, "arch_oracle: cannot write %s\n", path);
            return 1;
        }
        dump.active = true;
        cp.cb_eval           = dump_cb;
        cp.cb_eval_user_data = &dump;
    }
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "arch_oracle: failed to create context\n");
        return 1;
    }

    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    std::vector<llama_token> greedy;
    std::vector<std::vector<float>> step_logits;

    std::vector<llama_token> tokens = prompt;
    llama_batch batch = llama_batch_get_one(tokens.data(), (int32_t) tokens.size());
    for (int step = 0; step < n_new; ++step) {
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "arch_oracle: llama_decode failed at step %d\n", step);
            return 1;
        }
        if (dump.f) {
            dump.active = false;  // the prompt's decode only
        }
        const float * logits = llama_get_logits_ith(ctx, -1);
        step_logits.emplace_back(logits, logits + n_vocab);
        int best = 0;
        for (int i = 1; i < n_vocab; ++i) {
            if (logits[i] > logits[best]) {  // strict: ties go to the lowest id
                best = i;
            }
        }
        greedy.push_back(best);
        if (step + 1 < n_new) {
            tokens.assign(1, best);
            batch = llama_batch_get_one(tokens.data(), 1);
        }
    }

    printf("{\n  \"n_ctx_requested\": %d,\n  \"n_ctx\": %u,\n  \"n_ctx_seq\": %u,\n  \"n_batch\": %u,\n"
           "  \"n_ubatch\": %u,\n  \"n_vocab\": %d,\n",
           n_ctx, llama_n_ctx(ctx), llama_n_ctx_seq(ctx), llama_n_batch(ctx), llama_n_ubatch(ctx), n_vocab);
    printf("  \"prompt\": [");
    for (size_t i = 0; i < prompt.size(); ++i) {
        printf(i ? ", %d" : "%d", prompt[i]);
    }
    printf("],\n  \"greedy\": [");
    for (size_t i = 0; i < greedy.size(); ++i) {
        printf(i ? ", %d" : "%d", greedy[i]);
    }
    printf("],\n  \"step_logits\": [\n");
    for (size_t s = 0; s < step_logits.size(); ++s) {
        printf("    ");
        print_floats(step_logits[s].data(), n_vocab);
        printf(s + 1 < step_logits.size() ? ",\n" : "\n");
    }
    printf("  ]\n}\n");

    if (dump.f) {
        fclose(dump.f);
    }
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        return usage();
    }
    llama_log_set(log_cb, nullptr);

    const std::string cmd = argv[1];
    if ((cmd == "run" && argc != 7) || (cmd == "quantize" && argc != 6) || (cmd != "run" && cmd != "quantize")) {
        return usage();
    }

    // ggml backends are loaded dynamically; load exactly the one CPU variant asked for
    ggml_backend_reg_t reg = ggml_backend_load(argv[2]);
    if (!reg) {
        fprintf(stderr, "arch_oracle: failed to load backend %s\n", argv[2]);
        return 1;
    }
    fprintf(stderr, "arch_oracle: backend %s (%s), %zu backend(s) registered\n", argv[2], ggml_backend_reg_name(reg),
            ggml_backend_reg_count());
    llama_backend_init();

    int rc;
    if (cmd == "quantize") {
        rc = cmd_quantize(argv[3], argv[4], argv[5]);
    } else {
        rc = cmd_run(argv[3], atoi(argv[4]), atoi(argv[5]), argv[6]);
    }
    llama_backend_free();
    return rc;
}
