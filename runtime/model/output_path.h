// Where a command's output may go, decided before any work starts: a new or existing regular file
// (written whole, then renamed into place), or a FIFO or character device (written through, so that
// `--trace /dev/null` leaves /dev/null what it is). Nothing else: a symbolic link to a file would be
// replaced by the rename or, followed, would let a link planted in a shared folder redirect the write.
#pragma once
#include <string>

namespace medusa {

enum class OutputKind {
    NewFile,      // nothing at the path yet
    RegularFile,  // replaced whole
    Stream,       // a FIFO or character device (also behind a link, as /dev/stdout is): written through
};

// What is at `path`; throws std::runtime_error "PATH: ..." for a directory, a block device, a
// socket, a symbolic link to anything but a stream, or a folder that does not exist.
OutputKind classify_output_path(const std::string& path);
// The same, and for a file, that its folder can be written: tried by creating and removing a file
// in it, which is what the writer will do (the check for a command's outputs before its work).
OutputKind check_output_path(const std::string& path);

// A folder a command writes several files into, tried as above: itself when it exists, else the
// folder it would be made in (nothing is created). Throws std::runtime_error "DIR: ..." when it is
// not a folder or cannot be written.
void check_output_folder(const std::string& dir);

}  // namespace medusa
