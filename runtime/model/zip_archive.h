// The members of a ZIP archive whose entries are stored uncompressed, as torch.save writes them
// (PyTorch checkpoints such as Medusa's medusa_lm_head.pt). ZIP64 sizes and offsets are read;
// compressed entries, encryption and multi-disk archives are refused.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace medusa {

class ZipArchive {
public:
    // Throws FormatError "<name>: ..." for anything malformed or unsupported.
    ZipArchive(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);

    struct Member {
        const uint8_t* data;
        size_t size;
    };
    // The stored bytes of a member, or null when the archive has none of that name.
    const Member* find(const std::string& name) const;
    const std::map<std::string, Member>& members() const { return members_; }

private:
    std::shared_ptr<const std::vector<uint8_t>> bytes_;
    std::map<std::string, Member> members_;
};

}  // namespace medusa
