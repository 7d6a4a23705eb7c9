// Reads an .xz-compressed file into memory with liblzma (the vocabulary oracles ship compressed;
// nothing decompressed is ever written to disk).
#pragma once
#include <lzma.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace medusa::test {

inline std::shared_ptr<std::vector<uint8_t>> read_xz(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    const std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), {});
    lzma_stream s = LZMA_STREAM_INIT;
    REQUIRE(lzma_stream_decoder(&s, UINT64_MAX, 0) == LZMA_OK);
    auto out = std::make_shared<std::vector<uint8_t>>();
    s.next_in = in.data();
    s.avail_in = in.size();
    lzma_ret ret = LZMA_OK;
    while (ret == LZMA_OK) {
        const size_t at = out->size();
        out->resize(at + (1 << 20));
        s.next_out = out->data() + at;
        s.avail_out = 1 << 20;
        ret = lzma_code(&s, LZMA_FINISH);
        out->resize(at + (1 << 20) - s.avail_out);
    }
    lzma_end(&s);
    REQUIRE(ret == LZMA_STREAM_END);
    return out;
}

}  // namespace medusa::test
