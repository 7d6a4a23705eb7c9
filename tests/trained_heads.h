// Drafters trained for the tests: stories260K writes its own text on the CPU reference, and a
// short Medusa-1 run on the GPU learns from it (a few seconds), once per test process; likewise
// a short EAGLE-3 run over its layers 0, 2 and 4.
#pragma once
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "model/load_model.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "train/eagle3_training.h"
#include "train/head_training.h"
#include "train/seed_prompts.h"

namespace medusa::test {

struct DistillFixture {
    ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu{file};
    train::DistillData train, held;
    DistillFixture() {
        Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
        std::vector<std::vector<int>> prompts;
        for (const auto& p : train::seed_prompts()) prompts.push_back(tok.encode(p, true));
        train::DistillOptions o;
        o.sequences = 48;
        o.max_len = 200;
        o.seed = 1;
        CpuTreeRunner writer(cpu);
        train = train::generate_distill_data(writer, train::cpu_hidden_states(cpu), prompts, tok.bos_id(), o);
        o.sequences = 8;
        o.seed = 2;  // held out: other samples
        held = train::generate_distill_data(writer, train::cpu_hidden_states(cpu), prompts, tok.bos_id(), o);
    }
};

inline DistillFixture& distill_fixture() {
    static DistillFixture f;
    return f;
}

inline train::TrainOptions short_training() {
    train::TrainOptions o;
    o.steps = 160;
    o.batch = 128;
    o.lr = 1e-2f;
    o.seed = 3;
    return o;
}

inline const MedusaHeads& trained_heads() {
    static const MedusaHeads h = [] {
        const MedusaHeads init = MedusaHeads::init_from_model(distill_fixture().file, 4);
        return train::train_heads(gpu_context(), init, distill_fixture().train, short_training()).heads;
    }();
    return h;
}

// An EAGLE-3 layer fusing layers 0, 2 and 4, trained briefly with three test steps on text that
// stories260K wrote with those layers' inputs.
inline const EagleLayer& trained_eagle3() {
    static const EagleLayer e = [] {
        const ModelFile& file = distill_fixture().file;
        CpuReferenceModel cpu(file);
        Tokenizer tok = Tokenizer::from_file(model_path("tok512.model"));
        std::vector<std::vector<int>> prompts;
        for (const auto& p : train::seed_prompts()) prompts.push_back(tok.encode(p, true));
        train::DistillOptions o;
        o.sequences = 32;
        o.max_len = 96;
        o.seed = 1;
        o.feature_layers = {0, 2, 4};
        CpuTreeRunner writer(cpu);
        const train::DistillData data = train::generate_distill_data(
            writer, train::cpu_hidden_states(cpu, o.feature_layers), prompts, tok.bos_id(), o);
        const train::EagleTarget target = train::EagleTarget::from(file);
        const train::DraftVocabulary vocab = train::choose_draft_vocabulary(data, target.vocab);
        const EagleLayer init = EagleLayer::init_eagle3(file.config, o.feature_layers, vocab.tokens, target.final_norm,
                                                        target.lm_head, 1);
        train::Eagle3TrainOptions t;
        t.steps = 120;
        t.batch = 2;
        t.ttt_steps = 3;
        t.seed = 3;
        return train::train_eagle3(gpu_context(), init, target, file.config, data, t).layer;
    }();
    return e;
}

}  // namespace medusa::test
