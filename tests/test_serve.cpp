// `medusa serve` as a client sees it: a real server process on the shared story model (and on the
// tiny ChatML GGUF), every endpoint and every error through cpp-httplib's client, temperature 0
// giving exactly `medusa generate`'s text (plainly, with a drafter, through a chat template), a
// full queue, a client leaving mid-stream, and SIGTERM during a stream.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>


#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <cmath>
#include <regex>
#include <thread>

#include "cli_runner.h"
#include "serve_process.h"
#include "test_paths.h"
#include "tiny_gguf.h"

using medusa::test::model_path;
using medusa::test::run_medusa;
using medusa::test::ServeProcess;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kStory = "Once upon a time";

std::vector<std::string> story_model() {
    return {"-m", model_path("stories260K.bin"), "--tokenizer", model_path("tok512.model")};
}

std::string story_flags() {
    return "-m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model");
}

httplib::Result post(const ServeProcess& s, const std::string& path, const json& body, const std::string& key = "") {
    httplib::Headers h;
    if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
    return s.client().Post(path.c_str(), h, body.dump(), "application/json");
}

// What `medusa generate` prints after the prompt it echoes (its trailing newline dropped).
std::string generated(const std::string& args, const std::string& echoed) {
    const auto r = run_medusa("generate " + args + " 2>/dev/null");
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.out.rfind(echoed, 0) == 0);
    REQUIRE(r.out.back() == '\n');
    return r.out.substr(echoed.size(), r.out.size() - echoed.size() - 1);
}

// The "data: " payloads of a stream, in order.
std::vector<std::string> events(const std::string& stream) {
    std::vector<std::string> out;
    const std::regex data("data: (.*)\n\n");
    for (std::sregex_iterator it(stream.begin(), stream.end(), data), end; it != end; ++it) out.push_back((*it)[1]);
    return out;
}

// A raw connection to the server, for clients that misbehave as no HTTP library would.
int connect_raw(const ServeProcess& serve) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(serve.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    return fd;
}

// Waits until no request runs or waits (the decoding thread frees a slot just after its log line).
bool idle(const ServeProcess& s) {
    for (int i = 0; i < 250; ++i) {
        const auto h = s.client().Get("/health");
        if (h && json::parse(h->body)["running"] == 0 && json::parse(h->body)["waiting"] == 0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

void check_error(const httplib::Result& r, int status, const std::string& code) {
    REQUIRE(r);
    CHECK(r->status == status);
    CHECK(r->get_header_value("Content-Type") == "application/json");
    const json e = json::parse(r->body);
    CHECK(e["error"]["code"] == code);
    CHECK(!e["error"]["message"].get<std::string>().empty());
    CHECK(e["error"]["type"].is_string());
}

}  // namespace

TEST_CASE("medusa serve answers every endpoint as OpenAI's API does, with generate's text at temperature 0", "[serve]") {
    std::vector<std::string> args = story_model();
    args.insert(args.end(), {"--temp", "0", "--api-key", "sesame"});
    ServeProcess serve(args);
    CHECK_THAT(serve.err(), Catch::Contains("medusa serve: listening on http://127.0.0.1:"));

    const auto health = serve.client().Get("/health");  // no key needed
    REQUIRE(health);
    CHECK(json::parse(health->body) == json{{"status", "ok"}, {"model", "stories260K.bin"}, {"running", 0}, {"waiting", 0}, {"slots", 8}});

    check_error(serve.client().Get("/v1/models"), 401, "invalid_api_key");
    check_error(serve.client().Get("/v1/models", {{"Authorization", "Bearer sesamE"}}), 401, "invalid_api_key");
    check_error(post(serve, "/v1/completions", {{"prompt", kStory}}), 401, "invalid_api_key");
    const auto models = serve.client().Get("/v1/models", {{"Authorization", "Bearer sesame"}});
    REQUIRE(models);
    CHECK(json::parse(models->body)["data"][0]["id"] == "stories260K.bin");
    // One model by its id (the clients' models.retrieve), and the scheme's name in any case.
    const auto model = serve.client().Get("/v1/models/stories260K.bin", {{"Authorization", "bearer sesame"}});
    REQUIRE(model);
    CHECK(model->status == 200);
    CHECK(json::parse(model->body)["id"] == "stories260K.bin");
    CHECK(json::parse(model->body)["object"] == "model");
    check_error(serve.client().Get("/v1/models/gpt-4o", {{"Authorization", "BEARER sesame"}}), 404, "model_not_found");
    check_error(serve.client().Get("/v1/models/stories260K.bin"), 401, "invalid_api_key");

    const std::string expected = generated(story_flags() + " -p '" + kStory + "' -n 40 --temp 0", kStory);
    const auto tokens = run_medusa("tokenize " + story_flags() + " -p '" + kStory + "' --bos");
    const size_t prompt_tokens = json::parse(tokens.out).size();
    const auto whole = post(serve, "/v1/completions", {{"model", "any"}, {"prompt", kStory}, {"max_tokens", 40}}, "sesame");
    REQUIRE(whole);
    REQUIRE(whole->status == 200);
    const json reply = json::parse(whole->body);
    CHECK(reply["object"] == "text_completion");
    CHECK(reply["model"] == "stories260K.bin");
    CHECK(reply["choices"][0]["text"] == expected);
    CHECK(reply["choices"][0]["finish_reason"] == "length");
    CHECK(reply["usage"] == json{{"prompt_tokens", prompt_tokens}, {"completion_tokens", 40}, {"total_tokens", prompt_tokens + 40}});
    CHECK(reply["speculative"]["drafter"] == "plain decoding");
    CHECK(reply["speculative"]["steps"] == 40);
    CHECK(reply["speculative"]["tokens_per_second"].get<double>() > 0);

    const auto streamed = post(serve, "/v1/completions",
                               {{"prompt", kStory}, {"max_tokens", 40}, {"stream", true},
                                {"stream_options", {{"include_usage", true}}}},
                               "sesame");
    REQUIRE(streamed);
    CHECK(streamed->get_header_value("Content-Type") == "text/event-stream");
    const std::vector<std::string> chunks = events(streamed->body);
    REQUIRE(chunks.size() >= 3);
    CHECK(chunks.back() == "[DONE]");
    std::string text;
    for (size_t i = 0; i + 2 < chunks.size(); ++i) text += json::parse(chunks[i])["choices"][0]["text"].get<std::string>();
    CHECK(text == expected);
    const json last = json::parse(chunks[chunks.size() - 3]);
    CHECK(last["choices"][0]["finish_reason"] == "length");
    const json usage_chunk = json::parse(chunks[chunks.size() - 2]);  // asked for: a chunk of its own
    CHECK(usage_chunk["choices"] == json::array());
    CHECK(usage_chunk["usage"]["completion_tokens"] == 40);

    // Every error is OpenAI's JSON, and the server stays up.
    auto raw = [&](const std::string& body) {
        return serve.client().Post("/v1/completions", {{"Authorization", "Bearer sesame"}}, body, "application/json");
    };
    check_error(raw("{\"prompt\": "), 400, "invalid_json");
    check_error(raw(""), 400, "invalid_json");
    check_error(raw("{\"prompt\": \"x\", \"temperature\": \"hot\"}"), 400, "invalid_type");
    check_error(raw("{\"max_tokens\": 3}"), 400, "missing_field");
    check_error(post(serve, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, "sesame"), 400,
                "no_chat_template");
    check_error(serve.client().Get("/v1/nothing"), 404, "not_found");
    check_error(serve.client().Delete("/v1/models"), 404, "not_found");
    check_error(raw("{\"prompt\": \"" + std::string((size_t(1) << 20) + 1, 'a') + "\"}"), 413, "request_too_large");
    // Past the context in tokens (a token a word), and in bytes before any tokenizing.
    std::string many_tokens, many_bytes;
    for (int i = 0; i < 600; ++i) many_tokens += " a", many_bytes += " and then";
    const auto too_many = raw(json{{"prompt", many_tokens}}.dump());
    check_error(too_many, 400, "context_length_exceeded");
    CHECK_THAT(json::parse(too_many->body)["error"]["message"].get<std::string>(),
               Catch::Matches("the prompt has 60[0-9] tokens: more than the context of 512 tokens holds"));
    const auto too_long = raw(json{{"prompt", many_bytes}}.dump());
    check_error(too_long, 400, "context_length_exceeded");
    CHECK_THAT(json::parse(too_long->body)["error"]["message"].get<std::string>(),
               Catch::StartsWith("the prompt is 5400 bytes: more than the context of 512 tokens holds"));
    CHECK(serve.client().Get("/health")->status == 200);

    CHECK(serve.stop(SIGTERM) == 0);
    CHECK_THAT(serve.err(), Catch::EndsWith("medusa serve: stopped\n"));
}

TEST_CASE("medusa serve decodes as generate does with a drafter and through a chat template", "[serve]") {
    std::vector<std::string> args = story_model();
    args.insert(args.end(), {"--temp", "0", "--ngram", "4", "--chat-template", "chatml"});
    ServeProcess serve(args);
    const std::string flags = story_flags() + " --temp 0 --ngram 4";
    const auto r = post(serve, "/v1/completions", {{"prompt", kStory}, {"max_tokens", 120}});
    REQUIRE(r);
    const json reply = json::parse(r->body);
    CHECK(reply["choices"][0]["text"] == generated(flags + " -p '" + kStory + "' -n 120", kStory));
    CHECK_THAT(reply["speculative"]["drafter"].get<std::string>(), Catch::StartsWith("n-gram"));
    CHECK(reply["speculative"]["drafted_tokens"].get<long>() >= reply["speculative"]["accepted_tokens"].get<long>());

    // A stop string met inside a step that emitted several tokens: the reply ends before it, and
    // its usage counts what plain decoding counts, not the step's tokens past the stop.
    const std::string story = reply["choices"][0]["text"];
    const std::string stop = story.substr(story.size() / 3, 6);
    const json ask = {{"prompt", kStory}, {"max_tokens", 120}, {"stop", {stop}}};
    std::vector<std::string> plain_args = story_model(), self_drafted = story_model();
    plain_args.insert(plain_args.end(), {"--temp", "0"});
    // The model drafting for itself: every draft accepted, steps of several tokens.
    self_drafted.insert(self_drafted.end(), {"--temp", "0", "--draft-model", model_path("stories260K.bin"), "--gamma", "4", "--fixed-shape"});
    ServeProcess plain_serve(plain_args), drafting_serve(self_drafted);
    const auto plain_r = post(plain_serve, "/v1/completions", ask), drafted_r = post(drafting_serve, "/v1/completions", ask);
    REQUIRE(plain_r);
    REQUIRE(drafted_r);
    const json plain = json::parse(plain_r->body), drafted = json::parse(drafted_r->body);
    CHECK(drafted["choices"][0]["text"] == story.substr(0, story.find(stop)));
    CHECK(drafted["choices"][0]["text"] == plain["choices"][0]["text"]);
    CHECK(drafted["choices"][0]["finish_reason"] == "stop");
    CHECK(drafted["usage"] == plain["usage"]);
    CHECK(drafted["speculative"]["stop"] == "stop-string");
    CHECK(plain["speculative"]["stop"] == "stop-string");
    CHECK(drafted["speculative"]["steps"].get<int>() < plain["speculative"]["steps"].get<int>());

    // OpenAI's penalties and logit biases shape the target's and the drafter's distributions alike:
    // at temperature 0 the self-drafted reply is still plain decoding's, and differs from the unshaped one.
    const json shaped = {{"prompt", kStory},
                         {"max_tokens", 40},
                         {"frequency_penalty", 1.5},
                         {"presence_penalty", 0.5},
                         {"logit_bias", {{"13", -100}, {"29", 5}}}};
    const auto plain_shaped = post(plain_serve, "/v1/completions", shaped), drafted_shaped = post(drafting_serve, "/v1/completions", shaped);
    REQUIRE(plain_shaped);
    REQUIRE(drafted_shaped);
    const std::string shaped_text = json::parse(plain_shaped->body)["choices"][0]["text"];
    CHECK(json::parse(drafted_shaped->body)["choices"][0]["text"] == shaped_text);
    CHECK(shaped_text != story.substr(0, shaped_text.size()));
    CHECK(json::parse(drafted_shaped->body)["speculative"]["steps"].get<int>() < 40);
    check_error(post(plain_serve, "/v1/completions", {{"prompt", kStory}, {"logit_bias", {{"512", 1}}}}), 400, "invalid_value");

    // Log-probabilities come from the verify pass that accepted each token: the self-drafted
    // server's, which accepts several tokens a pass, are plain decoding's. At temperature 0 each
    // token is its position's likeliest, and the tokens spell the text.
    const json with_logprobs = {{"prompt", kStory}, {"max_tokens", 30}, {"logprobs", 3}};
    const auto plain_lp = post(plain_serve, "/v1/completions", with_logprobs);
    const auto drafted_lp = post(drafting_serve, "/v1/completions", with_logprobs);
    REQUIRE(plain_lp);
    REQUIRE(drafted_lp);
    const json pl = json::parse(plain_lp->body)["choices"][0], dl = json::parse(drafted_lp->body)["choices"][0];
    CHECK(pl["text"] == dl["text"]);
    REQUIRE(pl["logprobs"]["tokens"] == dl["logprobs"]["tokens"]);
    REQUIRE(pl["logprobs"]["tokens"].size() == 30);
    std::string spelled;
    for (size_t i = 0; i < 30; ++i) {
        INFO("token " << i);
        const std::string token = pl["logprobs"]["tokens"][i];
        CHECK(pl["logprobs"]["text_offset"][i] == spelled.size());
        spelled += token;
        const double lp = pl["logprobs"]["token_logprobs"][i];
        CHECK(std::fabs(lp - dl["logprobs"]["token_logprobs"][i].get<double>()) < 2e-3);
        CHECK(lp <= 0);
        const json top = pl["logprobs"]["top_logprobs"][i];
        CHECK(top.size() <= 3);
        double best = -1e30;
        for (const auto& [text, p] : top.items()) best = std::max(best, p.get<double>());
        CHECK(std::fabs(best - lp) < 1e-6);
    }
    CHECK(spelled == pl["text"]);
    // n choices: at temperature 0 alike; echo puts the prompt first.
    const auto two = post(plain_serve, "/v1/completions", {{"prompt", kStory}, {"max_tokens", 8}, {"n", 2}, {"echo", true}});
    REQUIRE(two);
    const json choices = json::parse(two->body)["choices"];
    REQUIRE(choices.size() == 2);
    CHECK(choices[0]["text"] == kStory + story.substr(0, choices[0]["text"].get<std::string>().size() - kStory.size()));
    CHECK(choices[1]["text"] == choices[0]["text"]);
    CHECK(choices[1]["index"] == 1);
    CHECK(json::parse(two->body)["usage"]["completion_tokens"] == 16);
    // Sampled, each choice has a seed of its own; the request's seed gives them again.
    const json sampled = {{"prompt", kStory}, {"max_tokens", 24}, {"n", 3}, {"temperature", 1.0}, {"seed", 7}};
    const auto first = post(drafting_serve, "/v1/completions", sampled), again = post(drafting_serve, "/v1/completions", sampled);
    REQUIRE(first);
    REQUIRE(again);
    const json a = json::parse(first->body)["choices"], b = json::parse(again->body)["choices"];
    CHECK(a == b);
    CHECK((a[0]["text"] != a[1]["text"] || a[1]["text"] != a[2]["text"]));

    const auto chat = post(serve, "/v1/chat/completions",
                           {{"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}}, {"max_tokens", 60}});
    REQUIRE(chat);
    REQUIRE(chat->status == 200);
    const json c = json::parse(chat->body);
    CHECK(c["object"] == "chat.completion");
    CHECK(c["choices"][0]["message"]["role"] == "assistant");
    const auto g = run_medusa("generate " + flags + " --chat-template chatml -p 'Tell me a story' -n 60 2>/dev/null");
    const std::string asks = "<|im_start|>assistant\n";
    REQUIRE(g.out.find(asks) != std::string::npos);
    const std::string reply_text = c["choices"][0]["message"]["content"];
    CHECK(reply_text.size() > 20);
    CHECK(g.out.substr(g.out.rfind(asks) + asks.size()) == reply_text + "\n");
    // A chat's logprobs: one entry a token, each with its bytes and the likeliest tokens.
    const auto chat_lp = post(serve, "/v1/chat/completions",
                              {{"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}}, {"max_tokens", 12},
                               {"logprobs", true}, {"top_logprobs", 2}});
    REQUIRE(chat_lp);
    const json cl = json::parse(chat_lp->body);
    const json content = cl["choices"][0]["logprobs"]["content"];
    CHECK(content.size() == cl["usage"]["completion_tokens"]);
    std::string chat_spelled;
    for (const json& t : content) {
        chat_spelled += t["token"].get<std::string>();
        CHECK(t["top_logprobs"].size() == 2);
        CHECK(t["bytes"].size() == t["token"].get<std::string>().size());
    }
    CHECK(chat_spelled == cl["choices"][0]["message"]["content"]);
    // Tools offered are in the prompt (the system block lists them), unless tool_choice is "none".
    const json tool = {{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}};
    const json ask_tools = {{"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}}, {"max_tokens", 4}, {"tools", {tool}}};
    json no_choice = ask_tools;
    no_choice["tool_choice"] = "none";
    const auto offered = post(serve, "/v1/chat/completions", ask_tools), declined = post(serve, "/v1/chat/completions", no_choice);
    REQUIRE(offered);
    REQUIRE(declined);
    const int plain_prompt = cl["usage"]["prompt_tokens"];
    CHECK(json::parse(offered->body)["usage"]["prompt_tokens"].get<int>() > plain_prompt + 50);
    CHECK(json::parse(declined->body)["usage"]["prompt_tokens"] == plain_prompt);
    CHECK(serve.stop(SIGINT) == 0);
}

TEST_CASE("medusa serve takes the chat template a GGUF carries", "[serve]") {
    const std::string chatml = medusa::test::kChatmlTemplate;
    const fs::path model = medusa::test::write_tiny_gguf("serve", &chatml);
    ServeProcess serve({"-m", model.string(), "--temp", "0"});
    CHECK_THAT(serve.err(), Catch::Contains("chatml"));
    const auto r = post(serve, "/v1/chat/completions",
                        {{"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "hi"}}}},
                         {"max_tokens", 8}});
    REQUIRE(r);
    REQUIRE(r->status == 200);
    // generate --chat renders the same conversation: its prompt's token count is what usage says.
    const auto g = run_medusa("generate -m " + model.string() + " --chat --system 'Be brief.' -p hi -n 8 --temp 0");
    std::smatch m;
    REQUIRE(std::regex_search(g.err, m, std::regex("([0-9]+) prompt tokens in")));
    const json reply = json::parse(r->body);
    CHECK(reply["usage"]["prompt_tokens"] == std::stoi(m[1]));
    CHECK(g.out.substr(g.out.rfind("<|im_start|>assistant\n") + 22) == reply["choices"][0]["message"]["content"].get<std::string>() + "\n");
    // Any order of roles: two user messages, a prefill the reply continues. The completion of the
    // prompt ChatML writes for them, specials and all, is the same text.
    const json shapes = {{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}},
                         {{"role", "assistant"}, {"content", "Sure"}}};
    const auto chat = post(serve, "/v1/chat/completions", {{"messages", shapes}, {"max_tokens", 6}});
    const auto plain = post(serve, "/v1/completions",
                            {{"prompt", "<|im_start|>user\na<|im_end|>\n<|im_start|>user\nb<|im_end|>\n<|im_start|>assistant\nSure"},
                             {"max_tokens", 6}});
    REQUIRE(chat);
    REQUIRE(plain);
    REQUIRE(chat->status == 200);
    REQUIRE(plain->status == 200);
    CHECK(json::parse(chat->body)["usage"] == json::parse(plain->body)["usage"]);
    CHECK(json::parse(chat->body)["choices"][0]["message"]["content"] == json::parse(plain->body)["choices"][0]["text"]);
    CHECK(serve.stop() == 0);
    fs::remove(model);
}

TEST_CASE("a full queue gets 503, a client leaving stops its generation, streamed or not, SIGTERM ends a running one", "[serve]") {
    // The tiny model never emits EOS: a generation runs until max_tokens (16000: seconds) unless stopped.
    const fs::path model = medusa::test::write_tiny_gguf("serve-queue", nullptr);
    ServeProcess serve({"-m", model.string(), "--temp", "0", "--parallel", "1", "--ctx-size", "16384"});
    const json long_stream = {{"prompt", "a"}, {"max_tokens", 16000}, {"stream", true}};

    // Reads a long stream in a thread: `started` once text arrives, then leaves (or reads on) when told.
    struct Reader {
        std::mutex m;
        std::condition_variable cv;
        bool started = false, leave = false;
        std::string received;
        std::thread thread;
        Reader(const ServeProcess& s, const json& body, bool read_to_end) {
            thread = std::thread([this, &s, body, read_to_end] {
                httplib::Request req;
                req.method = "POST";
                req.path = "/v1/completions";
                req.body = body.dump();
                req.set_header("Content-Type", "application/json");
                req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
                    std::unique_lock lock(m);
                    received.append(data, n);
                    started = true;
                    cv.notify_all();
                    if (read_to_end) return true;
                    cv.wait(lock, [&] { return leave; });
                    return false;  // closes the connection
                };
                s.client().send(req);
            });
        }
        void wait_started() {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return started; });
        }
        std::string finish() {
            {
                std::lock_guard lock(m);
                leave = true;
            }
            cv.notify_all();
            thread.join();
            return received;
        }
    };

    {
        Reader leaving(serve, long_stream, false);
        leaving.wait_started();
        CHECK(json::parse(serve.client().Get("/health")->body)["running"] == 1);
        const auto busy = post(serve, "/v1/completions", {{"prompt", "b"}, {"max_tokens", 2}});
        check_error(busy, 503, "server_busy");
        CHECK(busy->get_header_value("Retry-After") == "1");
        leaving.finish();
    }
    REQUIRE(serve.wait_for_err("the client went away"));
    std::smatch m;
    const std::string err = serve.err();
    REQUIRE(std::regex_search(err, m, std::regex("([0-9]+) new tokens in [0-9]+ steps .*stop: cancelled.*, the client went away")));
    CHECK(std::stoi(m[1]) < 16000);
    REQUIRE(idle(serve));
    const auto after = post(serve, "/v1/completions", {{"prompt", "b"}, {"max_tokens", 2}});  // the slot is free again
    REQUIRE(after);
    CHECK(after->status == 200);

    // A client of a whole (non-streamed) reply that gives up is noticed between steps too.
    {
        httplib::Client impatient = serve.client();
        impatient.set_read_timeout(1, 0);
        CHECK(!impatient.Post("/v1/completions", json{{"prompt", "c"}, {"max_tokens", 16000}}.dump(), "application/json"));
    }
    auto went_away = [&] {
        const std::string e = serve.err();
        size_t n = 0;
        for (size_t at = e.find("the client went away"); at != std::string::npos; at = e.find("the client went away", at + 1)) ++n;
        return n;
    };
    for (int i = 0; i < 100 && went_away() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(went_away() == 2);
    REQUIRE(idle(serve));

    Reader running(serve, long_stream, true);
    running.wait_started();
    CHECK(serve.stop(SIGTERM) == 0);
    const std::vector<std::string> chunks = events(running.finish());
    REQUIRE(!chunks.empty());
    CHECK(json::parse(chunks.back())["error"]["code"] == "shutting_down");
    CHECK_THAT(serve.err(), Catch::Contains("the server is stopping"));
    fs::remove(model);
}

TEST_CASE("medusa serve answers CORS preflights for this machine's pages and --cors's, and refuses other pages",
          "[serve]") {
    std::vector<std::string> args = story_model();
    args.insert(args.end(), {"--temp", "0", "--api-key", "sesame", "--cors", "https://chat.example.com"});
    ServeProcess serve(args);
    for (const char* origin : {"http://localhost:5173", "https://chat.example.com"}) {
        CAPTURE(origin);
        // The preflight carries no key: a browser sends it before the request it asks about.
        const auto pre = serve.client().Options("/v1/chat/completions",
                                                {{"Origin", origin},
                                                 {"Access-Control-Request-Method", "POST"},
                                                 {"Access-Control-Request-Headers", "authorization,content-type"}});
        REQUIRE(pre);
        CHECK(pre->status == 204);
        CHECK(pre->get_header_value("Access-Control-Allow-Origin") == origin);
        CHECK(pre->get_header_value("Access-Control-Allow-Headers") == "authorization,content-type");
        CHECK_THAT(pre->get_header_value("Access-Control-Allow-Methods"), Catch::Contains("POST"));
        const auto r = serve.client().Post("/v1/completions", {{"Origin", origin}, {"Authorization", "Bearer sesame"}},
                                           json{{"prompt", kStory}, {"max_tokens", 4}}.dump(), "application/json");
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->get_header_value("Access-Control-Allow-Origin") == origin);
        CHECK(r->get_header_value("Vary") == "Origin");
    }
    // Another site's page gets nothing done, preflight or not; a client that is no browser sends no Origin.
    const auto pre = serve.client().Options("/v1/completions", {{"Origin", "https://evil.example"}});
    check_error(pre, 403, "origin_not_allowed");
    CHECK_FALSE(pre->has_header("Access-Control-Allow-Origin"));
    const auto refused = serve.client().Post("/v1/completions", {{"Origin", "https://evil.example"}, {"Authorization", "Bearer sesame"}},
                                             json{{"prompt", kStory}, {"max_tokens", 4}}.dump(), "application/json");
    check_error(refused, 403, "origin_not_allowed");
    CHECK_THAT(json::parse(refused->body)["error"]["message"].get<std::string>(), Catch::Contains("--cors https://evil.example"));
    const auto plain = post(serve, "/v1/completions", {{"prompt", kStory}, {"max_tokens", 4}}, "sesame");
    REQUIRE(plain);
    CHECK(plain->status == 200);
    CHECK_FALSE(plain->has_header("Access-Control-Allow-Origin"));
    CHECK(serve.stop(SIGTERM) == 0);
    // A malformed --cors is refused before the model loads.
    const auto bad = run_medusa("serve " + story_flags() + " --cors chat.example.com");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--cors takes an origin"));
}

TEST_CASE("medusa serve --chat-template none chats in plain User:/Assistant: lines with a model that has no template",
          "[serve]") {
    std::vector<std::string> args = story_model();
    args.insert(args.end(), {"--temp", "0", "--chat-template", "none"});
    ServeProcess serve(args);
    const json messages = {{{"role", "system"}, {"content", "A story."}},
                           {{"role", "user"}, {"content", "Tell me"}},
                           {{"role", "assistant"}, {"content", "Once"}},
                           {{"role", "user"}, {"content", "More"}}};
    const auto r = post(serve, "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 40}});
    REQUIRE(r);
    REQUIRE(r->status == 200);
    const std::string reply = json::parse(r->body)["choices"][0]["message"]["content"];
    // What generate continues the same lines with, up to a "User:" line of the model's own.
    const std::string lines = "A story.\n\nUser: Tell me\nAssistant: Once\nUser: More\nAssistant:";
    std::string expected = generated(story_flags() + " --temp 0 -n 40 -p \"$(printf '" + lines + "')\"", lines);
    expected = expected.substr(0, expected.find("\nUser:"));
    CHECK(reply == expected);
    CHECK(serve.stop(SIGTERM) == 0);
    // Without --chat-template none the refusal says what none does.
    ServeProcess plain(story_model());
    const auto refused = post(plain, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
    check_error(refused, 400, "no_chat_template");
    CHECK_THAT(json::parse(refused->body)["error"]["message"].get<std::string>(), Catch::Contains("none: plain"));
}

TEST_CASE("medusa serve keeps answering beside 64 clients that send their headers a line a second", "[serve]") {
    ServeProcess serve([] {
        std::vector<std::string> args = story_model();
        args.insert(args.end(), {"--temp", "0"});
        return args;
    }());
    std::vector<int> slow;
    for (int i = 0; i < 64; ++i) {
        const int fd = connect_raw(serve);
        REQUIRE(::send(fd, "GET /health HTTP/1.1\r\n", 22, MSG_NOSIGNAL) == 22);
        slow.push_back(fd);
    }
    // A header line a second on each, never the blank line that ends them (stopped and joined
    // however the test ends).
    std::jthread trickle([&](std::stop_token stop) {
        while (!stop.stop_requested()) {
            for (int fd : slow) ::send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT);
            for (int i = 0; i < 10 && !stop.stop_requested(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    std::this_thread::sleep_for(std::chrono::seconds(2));  // every slow connection has its thread by now
    httplib::Client client("127.0.0.1", serve.port());
    client.set_read_timeout(5);
    const auto health = client.Get("/health");
    REQUIRE(health);
    CHECK(health->status == 200);
    const auto r = client.Post("/v1/completions", json{{"prompt", kStory}, {"max_tokens", 8}}.dump(), "application/json");
    REQUIRE(r);
    CHECK(r->status == 200);
    trickle.request_stop();
    trickle.join();
    for (int fd : slow) ::close(fd);
    CHECK(serve.stop(SIGTERM) == 0);
}

TEST_CASE("medusa serve drops a client that takes longer than --request-timeout to send its request, not one it answers",
          "[serve]") {
    const fs::path model = medusa::test::write_tiny_gguf("serve-deadline", nullptr);
    ServeProcess serve({"-m", model.string(), "--temp", "0", "--ctx-size", "16384", "--request-timeout", "1.5"});
    auto connect_slow = [&](const std::string& start) {
        const int fd = connect_raw(serve);
        REQUIRE(::send(fd, start.data(), start.size(), MSG_NOSIGNAL) == ssize_t(start.size()));
        return fd;
    };
    // Headers a line every 0.4 s, never ending; a body a byte every 0.4 s, never whole: each read
    // comes in time, the whole request never does.
    const int headers = connect_slow("GET /health HTTP/1.1\r\n");
    const int body = connect_slow("POST /v1/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    // A stream answered for longer than the deadline is not the client's delay: it goes on.
    httplib::Client streaming = serve.client();
    std::atomic<size_t> streamed{0};
    std::atomic<bool> leave{false};
    std::thread reader([&] {
        httplib::Request req;
        req.method = "POST";
        req.path = "/v1/completions";
        req.body = json{{"prompt", "a"}, {"max_tokens", 16000}, {"stream", true}}.dump();
        req.set_header("Content-Type", "application/json");
        req.content_receiver = [&](const char*, size_t n, uint64_t, uint64_t) {
            streamed += n;
            return !leave;
        };
        streaming.send(req);
    });
    auto alive = [](int fd) {
        char c;
        const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    };
    bool headers_dropped = false, body_dropped = false;
    for (int i = 0; i < 15 && !(headers_dropped && body_dropped); ++i) {
        if (!headers_dropped) ::send(headers, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (!body_dropped) ::send(body, " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        headers_dropped = headers_dropped || !alive(headers);
        body_dropped = body_dropped || !alive(body);
    }
    CHECK(headers_dropped);
    CHECK(body_dropped);
    CHECK_THAT(serve.err(), Catch::Contains("its request took longer than --request-timeout"));
    const size_t before = streamed;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(streamed > before);  // still streaming, well past the deadline
    CHECK(json::parse(serve.client().Get("/health")->body)["running"] == 1);
    leave = true;
    reader.join();
    ::close(headers);
    ::close(body);
    CHECK(serve.stop(SIGTERM) == 0);
    fs::remove(model);
}
