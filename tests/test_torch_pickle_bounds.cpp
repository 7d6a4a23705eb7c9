// Pickles built to exhaust memory: a kilobyte of shared nested dicts ("billion laughs": 8 keys to
// the same dict, 9 dicts deep, which a walk that flattens them turns into 8^8 tensors) and 4 MB of
// one-byte opcodes that each build a value. The state-dict reader refuses a dict reached twice and
// bounds its machine (torch_pickle.cpp says how): each must end with one line naming the file,
// within 64 MB of what reading Medusa's real heads takes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>

#include "cli_rusage.h"
#include "model/model_file.h"
#include "model/torch_pickle.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/torch/";

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A ZIP archive of stored members, as torch.save writes one (no CRCs: nothing here reads them).
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members) {
    std::string out, directory;
    for (const auto& [name, data] : members) {
        const uint32_t offset = uint32_t(out.size()), size = uint32_t(data.size());
        put<uint32_t>(out, 0x04034b50), put<uint16_t>(out, 20), put<uint16_t>(out, 0), put<uint16_t>(out, 0);
        put<uint32_t>(out, 0), put<uint32_t>(out, 0), put<uint32_t>(out, size), put<uint32_t>(out, size);
        put<uint16_t>(out, uint16_t(name.size())), put<uint16_t>(out, 0);
        out += name + data;
        put<uint32_t>(directory, 0x02014b50), put<uint16_t>(directory, 20), put<uint16_t>(directory, 20);
        put<uint16_t>(directory, 0), put<uint16_t>(directory, 0), put<uint32_t>(directory, 0), put<uint32_t>(directory, 0);
        put<uint32_t>(directory, size), put<uint32_t>(directory, size), put<uint16_t>(directory, uint16_t(name.size()));
        put<uint16_t>(directory, 0), put<uint16_t>(directory, 0), put<uint16_t>(directory, 0), put<uint16_t>(directory, 0);
        put<uint32_t>(directory, 0), put<uint32_t>(directory, offset);
        directory += name;
    }
    const uint32_t at = uint32_t(out.size());
    out += directory;
    put<uint32_t>(out, 0x06054b50), put<uint16_t>(out, 0), put<uint16_t>(out, 0);
    put<uint16_t>(out, uint16_t(members.size())), put<uint16_t>(out, uint16_t(members.size()));
    put<uint32_t>(out, uint32_t(directory.size())), put<uint32_t>(out, at), put<uint16_t>(out, 0);
    return out;
}

std::string short_string(const std::string& s) { return "\x8c"s + char(s.size()) + s; }  // SHORT_BINUNICODE

// A float tensor of 4 values in storage "0", as torch.save pickles one.
std::string tensor_ops() {
    return "ctorch._utils\n_rebuild_tensor_v2\n("s + "(" + short_string("storage") + "ctorch\nFloatStorage\n" +
           short_string("0") + short_string("cpu") + "K\x04tQ" + "K\x00"s + "K\x04\x85" + "K\x01\x85" + "\x89" + "tR";
}

// Level 0 holds a tensor; each of `levels` levels above holds the one below under `fanout` keys.
std::string billion_laughs(int fanout, int levels) {
    std::string p = "\x80\x02}q\x00("s + short_string("w") + tensor_ops() + "u";
    for (int level = 1; level <= levels; ++level) {
        p += "}q"s;
        p += char(level);
        p += '(';
        for (int k = 0; k < fanout; ++k) {
            p += short_string(std::string(1, 'k').append(std::to_string(k)));
            p += 'h';
            p += char(level - 1);
        }
        p += 'u';
    }
    return p + ".";
}

// A dict that holds itself under the key "me".
std::string self_holding() { return "\x80\x02}q\x00"s + short_string("me") + "h\x00s."s; }

// 4 MB of EMPTY_DICT: each opcode one value on the stack.
std::string many_values() { return "\x80\x02" + std::string(4 << 20, '}'); }

std::string pt_file(const std::string& pickle) {
    return stored_zip({{"archive/data.pkl", pickle}, {"archive/data/0", std::string(16, '\0')}});
}

std::string pickle_error(const std::string& pkl) {
    try {
        read_torch_state_dict(reinterpret_cast<const uint8_t*>(pkl.data()), pkl.size(), "x.pt");
    } catch (const FormatError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a state dict whose dicts are shared or hold themselves is refused", "[pickle-bounds]") {
    const std::string laughs = billion_laughs(8, 8);
    CHECK(laughs.size() < 1024);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THAT(pickle_error(laughs), Catch::StartsWith("x.pt: the dict 'k0.k0.k0.k0.k0.k0.k0.k1' is reached a second time") &&
                                         Catch::Contains("refused"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    CHECK_THAT(pickle_error(self_holding()), Catch::StartsWith("x.pt: the dict 'me' is reached a second time"));
    // Two keys to one dict of tensors, at the top: still one dict in two places.
    CHECK_THAT(pickle_error(billion_laughs(2, 1)), Catch::StartsWith("x.pt: the dict 'k1' is reached a second time"));
    // The same pickle with one key per level is a state dict: nine dicts deep is one too many.
    CHECK(pickle_error(billion_laughs(1, 8)) == "no error");
    CHECK(read_torch_state_dict(reinterpret_cast<const uint8_t*>(billion_laughs(1, 8).data()), billion_laughs(1, 8).size(),
                                "x.pt")
              .count("k0.k0.k0.k0.k0.k0.k0.k0.w") == 1);
    CHECK_THAT(pickle_error(billion_laughs(1, 9)), Catch::Contains("x.pt: dicts nested too deep"));
    // A 4 MB pickle stops at the machine's bound on opcodes.
    CHECK(pickle_error(many_values()) ==
          "x.pt: the pickle runs more than 262144 opcodes, more than any state dict needs");
    CHECK_THAT(pickle_error("\x80\x02}r\x00\x00\x00\x40"s), Catch::Contains("memo index 1073741824 is beyond"));
}

TEST_CASE("hostile heads pickles end through the CLI in bounded memory and time", "[pickle-bounds]") {
    test::TempDir tmp("medusa-pickle-bounds");
    const std::string model = test::model_path("stories260K.bin");
    auto export_heads = [&](const std::string& heads) {
        return test::run_medusa_limited(
            {"export-heads", "-m", model, "--heads", heads, "--out", (tmp.path / "out").string()}, 20);
    };
    const test::ChildResult baseline = export_heads(kFixtures + "medusa_lm_head.pt");
    REQUIRE(baseline.exit_code == 0);
    struct Case {
        std::string name, pickle, problem;
    };
    for (const Case& c : {Case{"laughs.pt", billion_laughs(8, 8), "is reached a second time"},
                          Case{"many.pt", many_values(), "more than 262144 opcodes"}}) {
        INFO(c.name);
        const fs::path path = tmp.path / c.name;
        std::ofstream(path, std::ios::binary) << pt_file(c.pickle);
        const test::ChildResult r = export_heads(path.string());
        CHECK(r.exit_code == 1);  // not 128 + SIGALRM: it ended by itself
        CHECK_THAT(r.err, Catch::Contains(path.string() + ": " ) && Catch::Contains(c.problem));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.max_rss_kb < baseline.max_rss_kb + 64 * 1024);
    }
}
