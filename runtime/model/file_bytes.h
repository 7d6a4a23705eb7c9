// Whole-file reads and bounds-checked little-endian reading of untrusted bytes.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa {

// JSON and configuration files are read whole; nothing legitimate comes near this.
constexpr uint64_t kMaxTextFileBytes = uint64_t(64) << 20;

// Throws FormatError "PATH: not a regular file (a FIFO)" (or "no such file or directory") unless
// `path`, after following symlinks, is a regular file: a FIFO would block, /dev/zero never ends.
void require_regular_file(const std::string& path);

// The whole file, which must be a regular file of at most `max_bytes`; memory is its size.
std::shared_ptr<const std::vector<uint8_t>> read_file_bytes(const std::string& path,
                                                            uint64_t max_bytes = UINT64_MAX);
std::string read_text_file(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes);

// Reads values from a byte range; any read past the end throws FormatError naming the file.
class ByteReader {
public:
    ByteReader(const uint8_t* data, size_t size, std::string name) : data_(data), size_(size), name_(std::move(name)) {}
    template <class T>
    T read(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string read_string(uint64_t length, const char* what) {
        need(length, what);
        std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(length));
        pos_ += size_t(length);
        return s;
    }
    void need(uint64_t bytes, const char* what) const {
        if (bytes > size_ - pos_)
            throw FormatError(name_ + ": truncated: " + what + " needs " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(pos_) + " but the file has " + std::to_string(size_) + " bytes");
    }
    void skip(uint64_t bytes, const char* what) {
        need(bytes, what);
        pos_ += size_t(bytes);
    }
    void seek(size_t pos) { pos_ = pos; }
    size_t pos() const { return pos_; }
    size_t size() const { return size_; }
    const uint8_t* here() const { return data_ + pos_; }
    const std::string& name() const { return name_; }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    std::string name_;
};

// Checks a model configuration before anything is sized from it.
void validate_config(const LlamaConfig& c, const std::string& name);

}  // namespace medusa
