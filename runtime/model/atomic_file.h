// Writes a whole file so that it appears complete or not at all: a temporary file in the same
// folder, written, flushed to disk, then renamed over the path. An existing file survives any
// failure untouched. A temporary left by a killed writer is removed by the next writer of the file.
// A FIFO or character device at the path is written through instead (model/output_path.h), and
// what cannot be written (a link to a file, a directory, a missing folder) throws at construction,
// before any work.
#pragma once
#include <string>
#include <string_view>
#include <vector>

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
    bool stream_ = false;  // written through: nothing to rename
};

// The whole file at once.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Files that are only meaningful together (weights and the config.json that describes them): every
// temporary is written and flushed before the first rename, so a failure on any of them (a full
// disk) leaves all the old files as they were.
struct FileContents {
    std::string path;
    std::string_view bytes;
};
void write_files_atomically(const std::vector<FileContents>& files);

}  // namespace medusa
