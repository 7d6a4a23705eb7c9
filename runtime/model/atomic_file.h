// Writes a whole file so that it appears complete or not at all: a temporary file in the same
// folder, written, flushed to disk, then renamed over the path. An existing file survives any
// failure untouched. A temporary left by a killed writer is removed by the next writer of the file.
#pragma once
#include <string>
#include <string_view>

namespace medusa {

// A file written in pieces (a trace, as decoding goes) that appears only when commit() succeeds;
// destroyed uncommitted, it removes its temporary. Every failure throws std::runtime_error
// "PATH: cannot write (STEP): strerror".
class AtomicFileWriter {
public:
    explicit AtomicFileWriter(std::string path);
    ~AtomicFileWriter();
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

    void write(std::string_view bytes);
    void commit();  // fsync, close, rename over the path
    const std::string& path() const { return path_; }

private:
    [[noreturn]] void fail(const char* step, int err);
    std::string path_, tmp_;
    int fd_ = -1;
};

// The whole file at once.
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace medusa
