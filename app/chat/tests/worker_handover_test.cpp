// The worker/UI hand-over with real decoding: the DecodeWorker runs Medusa steps on the GPU
// (lavapipe here) while this thread, standing in for the UI, polls the StepLog as fast as it can
// and calls the worker's control methods. What the reader ends with must be exactly what the
// decoder produced, step for step: nothing lost, repeated or torn. scripts/test_app_sanitizers.sh
// runs this under ThreadSanitizer.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "decode/medusa_drafter.h"
#include "decode/speculative_decoder.h"
#include "decode/tree.h"
#include "decode_worker.h"
#include "model/load_model.h"
#include "worker_fixture.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "llm/medusa_heads.h"
#include "model/chat_template.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

namespace {

// A frame's worth of UI work is far shorter than a step; a short nap keeps a spinning reader from
// starving the worker of the CPU (2 cores, lavapipe) while still reading many times per step.
void nap() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

DecodeSettings greedy_medusa() {
    DecodeSettings s;  // stories260K + tok512, untrained heads
    s.mode = DrafterKind::Medusa;
    s.fixed_shape = true;  // the same tree every step, so the two runs' steps compare node for node
    set_tree_field(s, "chain:3");
    s.medusa.num_heads = 3;
    s.rule = AcceptRule::Greedy;
    s.max_new_tokens = 80;
    return s;
}

// The same generation straight through the speculative decoder, on this thread: the reference.
std::vector<StepTrace> reference_steps(const DecodeSettings& s, const std::string& prompt) {
    const ModelFile file = load_model(s.model_path);
    GpuModel model(context(), file);
    GpuTreeRunner runner(model);
    const Tokenizer tok = Tokenizer::from_file(s.tokenizer_path);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, s.medusa.num_heads);
    const TreeBuffers tree = build_tree_buffers(load_tree(s.medusa.tree));
    MedusaDrafter drafter(runner, file, heads, tree);
    DecodeOptions o;
    o.rule = AcceptRule::Greedy;
    o.max_new_tokens = s.max_new_tokens;
    o.stop_tokens = {tok.eos_id(), tok.bos_id()};  // llama2.c stories end at BOS, as the worker stops
    o.sampling.seed = s.sampling.seed;
    SpeculativeDecoder decoder(runner, drafter, o);
    std::vector<StepTrace> out;
    decoder.generate(tok.encode(prompt, true), [&](const StepTrace& t) {
        out.push_back(t);
        return true;
    });
    return out;
}

void check_same_steps(const std::vector<StepRecord>& got, const std::vector<StepTrace>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("step " << i);
        const StepTrace& a = got[i].trace;
        const StepTrace& b = want[i];
        REQUIRE(a.step == b.step);
        REQUIRE(a.base == b.base);
        REQUIRE(a.emitted == b.emitted);
        REQUIRE(a.path == b.path);
        REQUIRE(a.bonus == b.bonus);
        REQUIRE(a.accepted == b.accepted);
        REQUIRE(a.nodes.size() == b.nodes.size());
        for (size_t n = 0; n < a.nodes.size(); ++n) REQUIRE(a.nodes[n].token == b.nodes[n].token);
        REQUIRE(got[i].emitted_text.size() == a.emitted.size());
    }
}

}  // namespace

TEST_CASE("the UI thread polling during real decoding sees exactly the decoder's steps", "[chat][worker]") {
    const DecodeSettings s = greedy_medusa();
    const std::string prompt = "Once upon a time";
    const std::vector<StepTrace> want = reference_steps(s, prompt);
    REQUIRE(want.size() > 10);

    StepLog log;
    DecodeWorker worker(context(), log);
    StepLogReader reader;
    REQUIRE(worker.generate(prompt, s));
    size_t polls = 0, polls_with_news = 0, last = 0;
    bool monotonic = true;
    std::string status;
    while (worker.busy()) {  // what the UI does every frame
        if (reader.poll(log)) ++polls_with_news;
        ++polls;
        monotonic = monotonic && reader.steps().size() >= last;
        last = reader.steps().size();
        status = worker.status();
        (void)worker.last_error();
        (void)worker.paused();
        nap();
    }
    worker.wait_idle();
    INFO(worker.last_error());
    REQUIRE(worker.last_error().empty());
    reader.poll(log);
    CHECK(monotonic);
    INFO("polls " << polls << ", with news " << polls_with_news);
    CHECK(polls_with_news > 1);  // the reader really read while the worker wrote
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].done);
    check_same_steps(reader.steps(), want);

    // Stop mid-generation, clear, generate again: the second turn alone, again complete.
    REQUIRE(worker.generate(prompt, s));
    while (worker.busy() && reader.steps().size() < want.size() + 3) reader.poll(log), nap();
    worker.stop();
    worker.wait_idle();
    reader.poll(log);
    log.clear();
    REQUIRE(worker.generate(prompt, s));
    while (worker.busy()) reader.poll(log), nap();
    worker.wait_idle();
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].done);
    CHECK(reader.turns()[0].stop_reason != StopReason::Cancelled);
    check_same_steps(reader.steps(), want);
    CHECK(context().validation_messages() == 0);
}

TEST_CASE("teaching mode: steps released one at a time from the UI thread", "[chat][worker]") {
    const DecodeSettings s = greedy_medusa();
    StepLog log;
    DecodeWorker worker(context(), log);
    StepLogReader reader;
    // Polls until the reader holds `n` steps or the worker ends (then the REQUIREs below fail).
    auto poll_until = [&](size_t n) {
        while (reader.steps().size() < n && worker.busy()) reader.poll(log), nap();
        reader.poll(log);
    };
    worker.set_paused(true);
    REQUIRE(worker.generate("Once upon a time", s));
    // The prompt's step comes first; the worker then holds before the next one. (Releases given
    // before the worker has taken the job belong to no job and are dropped with it.)
    poll_until(1);
    REQUIRE(reader.steps().size() == 1);
    // Each release lets exactly one more step through.
    for (size_t i = 1; i <= 4; ++i) {
        worker.step_once();
        poll_until(i + 1);
        REQUIRE(reader.steps().size() == i + 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // held: nothing more comes
    reader.poll(log);
    CHECK(reader.steps().size() == 5);
    CHECK(worker.busy());
    worker.set_paused(false);
    worker.wait_idle();
    reader.poll(log);
    CHECK(reader.turns().at(0).done);
    check_same_steps(reader.steps(), reference_steps(s, "Once upon a time"));
}

namespace {

// stories260K-f32.gguf with a tokenizer.chat_template key added: the shared model, made to look
// like a ChatML chat model. The key goes first, padded so that the tensor data keeps its alignment.
std::string chatml_copy_of_stories_gguf() {
    std::ifstream in(MEDUSA_SHARED_DIR "/models/gguf/stories260K-f32.gguf", std::ios::binary);
    std::string g((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(g.size() > 24);
    std::string value =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    const std::string key = "tokenizer.chat_template";
    auto kv_size = [&] { return 8 + key.size() + 4 + 8 + value.size(); };
    while (kv_size() % 256) value += ' ';
    std::string kv;
    auto u64 = [&](uint64_t v) { kv.append(reinterpret_cast<const char*>(&v), 8); };
    u64(key.size());
    kv += key;
    const uint32_t type_string = 8;
    kv.append(reinterpret_cast<const char*>(&type_string), 4);
    u64(value.size());
    kv += value;
    uint64_t n_kv;
    std::memcpy(&n_kv, g.data() + 16, 8);
    ++n_kv;
    std::memcpy(g.data() + 16, &n_kv, 8);
    g.insert(24, kv);
    const auto path = std::filesystem::temp_directory_path() / ("medusa-chatml-" + std::to_string(::getpid()) + ".gguf");
    std::ofstream(path, std::ios::binary) << g;
    return path.string();
}

std::vector<int> prompt_of_first_step(const StepLogReader& reader, int turn_index) {
    const int id = reader.turns().at(size_t(turn_index)).id;
    for (const StepRecord& r : reader.steps())
        if (r.turn == id) return std::vector<int>(size_t(r.trace.base) + 1);  // step 1's root is the prompt's last token
    FAIL("turn without steps");
    return {};
}

std::string reply_of(const StepLogReader& reader, int turn_index) {
    const int id = reader.turns().at(size_t(turn_index)).id;
    std::string s;
    for (const StepRecord& r : reader.steps())
        if (r.turn == id)
            for (const auto& t : r.emitted_text) s += t;
    return s.substr(std::min(s.size(), s.find_first_not_of(' ')));
}

}  // namespace

TEST_CASE("a chat model's turns are prompted through its template with the conversation so far",
          "[chat][worker][chat-template]") {
    const std::string path = chatml_copy_of_stories_gguf();
    const ModelFile file = load_model(path);
    REQUIRE(detect_chat_template(file).kind == ChatTemplate::ChatML);
    const Tokenizer tok = Tokenizer::from_serialized(file.embedded_tokenizer, path);
    DecodeSettings s;
    s.model_path = path;
    s.tokenizer_path = "";  // the GGUF's own vocabulary
    s.mode = DrafterKind::Plain;
    s.max_new_tokens = 12;
    StepLog log;
    DecodeWorker worker(context(), log);
    StepLogReader reader;
    auto turn = [&](const std::string& text) {
        REQUIRE(worker.generate(text, s));
        worker.wait_idle();
        INFO(worker.last_error());
        REQUIRE(worker.last_error().empty());
        reader.poll(log);
    };
    Conversation c;
    c.user = "Hi there";
    turn(c.user);
    // The first step's cache base is the prompt's length.
    CHECK(prompt_of_first_step(reader, 0).size() == encode_chat(render_chat(ChatTemplate::ChatML, c), tok).size());
    const std::string reply = reply_of(reader, 0);
    REQUIRE(!reply.empty());
    turn("And then?");
    Conversation c2;
    c2.history = {{"Hi there", reply}};
    c2.user = "And then?";
    const size_t with_history = encode_chat(render_chat(ChatTemplate::ChatML, c2), tok).size();
    CHECK(prompt_of_first_step(reader, 1).size() == with_history);
    CHECK(with_history > encode_chat(render_chat(ChatTemplate::ChatML, c), tok).size() + 10);
    // A clear starts a new conversation: no history.
    log.clear();
    reader.poll(log);
    c.user = "And then?";
    turn(c.user);
    CHECK(prompt_of_first_step(reader, 0).size() == encode_chat(render_chat(ChatTemplate::ChatML, c), tok).size());
    std::filesystem::remove(path);

    // The story model itself: its text as it is.
    DecodeSettings story = s;
    story.model_path = MEDUSA_SHARED_DIR "/models/gguf/stories260K-f32.gguf";
    s = story;
    log.clear();
    reader.poll(log);
    turn("Hi there");
    CHECK(prompt_of_first_step(reader, 0).size() == tok.encode("Hi there", true).size());
}

TEST_CASE("a failed load keeps the loaded model, its status and its decoding, with the error beside them",
          "[chat][worker]") {
    StepLog log;
    DecodeWorker worker(context(), log);
    DecodeSettings good = greedy_medusa();
    good.max_new_tokens = 12;
    worker.load(good);
    worker.wait_idle();
    REQUIRE(worker.last_error().empty());
    const std::string status = worker.status();
    CHECK_THAT(status, Catch::Contains("stories260K.bin"));
    DecodeSettings bad = good;
    bad.model_path = "/nonexistent/model.gguf";
    worker.load(bad);
    worker.wait_idle();
    CHECK_THAT(worker.last_error(), Catch::Contains("/nonexistent/model.gguf"));
    CHECK(worker.status() == status);
    // A bad draft model in draft mode: the same.
    DecodeSettings bad_draft = good;
    bad_draft.mode = DrafterKind::DraftModel;
    bad_draft.draft.model = "/nonexistent/draft.bin";
    worker.load(bad_draft);
    worker.wait_idle();
    CHECK_THAT(worker.last_error(), Catch::Contains("/nonexistent/draft.bin"));
    CHECK(worker.status() == status);
    // A value out of range: validate()'s message, not a value quietly clamped.
    DecodeSettings long_chain = bad_draft;
    long_chain.draft.model = good.draft.model;
    long_chain.draft.gamma = kMaxDraftedTokens + 1;
    worker.load(long_chain);
    worker.wait_idle();
    CHECK(worker.last_error() == "--gamma must be in 1.." + std::to_string(kMaxDraftedTokens));
    CHECK(worker.status() == status);
    // The previous settings still decode.
    REQUIRE(worker.generate("Once upon a time", good));
    worker.wait_idle();
    CHECK(worker.last_error().empty());
    StepLogReader reader;
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].new_tokens == 12);
}

TEST_CASE("a model of NaN weights stops the turn with an error naming it", "[chat][worker]") {
    DecodeSettings nan_model = greedy_medusa();
    std::ifstream in(nan_model.model_path, std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), {});
    const float nan = std::nanf("");
    for (size_t i = 0; i < 512 * 64; ++i) std::memcpy(&b[28 + 4 * i], &nan, 4);  // the embedding
    nan_model.model_path = "/tmp/medusa-chat-nan-" + std::to_string(::getpid()) + ".bin";
    std::ofstream(nan_model.model_path, std::ios::binary).write(b.data(), std::streamsize(b.size()));
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Once upon a time", nan_model));
    worker.wait_idle();
    CHECK(worker.last_error() == nan_model.model_path + ": the model produced NaN/Inf logits (non-finite weights?)");
    std::remove(nan_model.model_path.c_str());
}
