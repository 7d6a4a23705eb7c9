// Whole-file reads and bounds-checked little-endian reading of untrusted bytes.
#pragma once
#include <algorithm>
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

// The whole file, which must be a regular file of at most `max_bytes`; memory is its size. A file
// too large for memory is refused naming it, not with a bare std::bad_alloc.
std::shared_ptr<const std::vector<uint8_t>> read_file_bytes(const std::string& path,
                                                            uint64_t max_bytes = UINT64_MAX);

// The first `head_bytes` of a regular file (all of it when shorter) and the file's size: enough to
// check a format's header, and the size its header implies, before the whole file is read.
struct FileHead {
    std::vector<uint8_t> bytes;
    uint64_t file_size = 0;
    bool whole() const { return bytes.size() == file_size; }
};
FileHead read_file_head(const std::string& path, uint64_t head_bytes);

// Thrown by ByteReader when a read runs past the bytes it was given but not past the file they
// begin: the caller read a head too short for this header, and may read more and try again.
struct HeadTooShort : FormatError {
    using FormatError::FormatError;
};
std::string read_text_file(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes);

// Reads values from a byte range; any read past the end throws FormatError naming the file. The
// range may be the head of a longer file (`file_size`): a read past the head then throws
// HeadTooShort, and remaining() counts the whole file, so checks of counts against the room the
// file has hold for a head as for the whole file.
class ByteReader {
public:
    ByteReader(const uint8_t* data, size_t size, std::string name, uint64_t file_size = 0)
        : data_(data), size_(size), file_size_(std::max<uint64_t>(file_size, size)), name_(std::move(name)) {}
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
        if (bytes <= size_ - pos_) return;
        if (bytes <= file_size_ - pos_)
            throw HeadTooShort(name_ + ": " + what + " lies past the first " + std::to_string(size_) + " bytes read");
        throw FormatError(name_ + ": truncated: " + what + " needs " + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(pos_) + " but the file has " + std::to_string(file_size_) + " bytes");
    }
    void skip(uint64_t bytes, const char* what) {
        need(bytes, what);
        pos_ += size_t(bytes);
    }
    void seek(size_t pos) { pos_ = pos; }
    size_t pos() const { return pos_; }
    size_t size() const { return size_; }
    uint64_t file_size() const { return file_size_; }
    uint64_t remaining() const { return file_size_ - pos_; }  // in the whole file
    const uint8_t* here() const { return data_ + pos_; }
    const std::string& name() const { return name_; }

private:
    const uint8_t* data_;
    size_t size_;
    uint64_t file_size_;
    size_t pos_ = 0;
    std::string name_;
};

}  // namespace medusa
