#include "model/zip_archive.h"

#include <algorithm>

#include "model/file_bytes.h"

namespace medusa {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEnd = 0x06054b50;
constexpr uint32_t kEnd64 = 0x06064b50, kEnd64Locator = 0x07064b50;
constexpr size_t kMaxMembers = 1u << 20;

// The ZIP64 extended information extra field replaces the 32-bit fields that hold 0xFFFFFFFF, in order.
void read_zip64_extra(ByteReader extra, uint64_t& size, uint64_t& compressed, uint64_t& offset) {
    while (extra.size() - extra.pos() >= 4) {
        const uint16_t id = extra.read<uint16_t>("extra field id");
        const uint16_t len = extra.read<uint16_t>("extra field length");
        if (id != 0x0001) {
            extra.skip(len, "extra field");
            continue;
        }
        ByteReader z(extra.here(), std::min<size_t>(len, extra.size() - extra.pos()), extra.name());
        if (size == 0xFFFFFFFFu) size = z.read<uint64_t>("ZIP64 size");
        if (compressed == 0xFFFFFFFFu) compressed = z.read<uint64_t>("ZIP64 compressed size");
        if (offset == 0xFFFFFFFFu) offset = z.read<uint64_t>("ZIP64 header offset");
        return;
    }
}

}  // namespace

ZipArchive::ZipArchive(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name)
    : bytes_(std::move(bytes)) {
    const std::vector<uint8_t>& b = *bytes_;
    auto bad = [&](const std::string& what) { throw FormatError(name + ": " + what); };
    // The end-of-central-directory record: 22 bytes plus a comment of at most 65535.
    if (b.size() < 22) bad("too short for a ZIP archive");
    size_t end = std::string::npos;
    for (size_t at = b.size() - 22 + 1; at-- > 0 && b.size() - at <= 22 + 65535;) {
        uint32_t sig;
        std::memcpy(&sig, &b[at], 4);
        if (sig == kEnd) {
            end = at;
            break;
        }
    }
    if (end == std::string::npos) bad("not a ZIP archive (no end of central directory)");
    ByteReader e(b.data() + end, b.size() - end, name);
    e.skip(4, "signature");
    const uint16_t disk = e.read<uint16_t>("disk number"), cd_disk = e.read<uint16_t>("central directory disk");
    e.skip(2, "entries on this disk");
    uint64_t count = e.read<uint16_t>("entry count");
    uint64_t cd_size = e.read<uint32_t>("central directory size");
    uint64_t cd_offset = e.read<uint32_t>("central directory offset");
    if (disk != 0 || cd_disk != 0) bad("multi-disk ZIP archives are not supported");
    if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {  // ZIP64
        if (end < 20) bad("ZIP64 locator missing");
        ByteReader loc(b.data() + end - 20, 20, name);
        if (loc.read<uint32_t>("ZIP64 locator signature") != kEnd64Locator) bad("ZIP64 locator missing");
        loc.skip(4, "disk");
        const uint64_t at = loc.read<uint64_t>("ZIP64 end record offset");
        if (at > b.size()) bad("ZIP64 end record lies outside the file");
        ByteReader z(b.data() + at, b.size() - at, name);
        if (z.read<uint32_t>("ZIP64 end signature") != kEnd64) bad("bad ZIP64 end record");
        z.skip(8 + 2 + 2 + 4 + 4 + 8, "ZIP64 end record");
        count = z.read<uint64_t>("ZIP64 entry count");
        cd_size = z.read<uint64_t>("ZIP64 central directory size");
        cd_offset = z.read<uint64_t>("ZIP64 central directory offset");
    }
    if (cd_offset > b.size() || cd_size > b.size() - cd_offset) bad("central directory lies outside the file");
    if (count > kMaxMembers || count > cd_size / 46) bad("absurd member count " + std::to_string(count));

    ByteReader cd(b.data() + cd_offset, size_t(cd_size), name);
    for (uint64_t i = 0; i < count; ++i) {
        if (cd.read<uint32_t>("central header signature") != kCentralHeader) bad("bad central directory entry");
        cd.skip(4, "versions");
        const uint16_t flags = cd.read<uint16_t>("flags"), method = cd.read<uint16_t>("compression method");
        cd.skip(8, "time, date, crc");
        uint64_t compressed = cd.read<uint32_t>("compressed size"), size = cd.read<uint32_t>("size");
        const uint16_t name_len = cd.read<uint16_t>("name length"), extra_len = cd.read<uint16_t>("extra length");
        const uint16_t comment_len = cd.read<uint16_t>("comment length");
        cd.skip(8, "disk, attributes");
        uint64_t offset = cd.read<uint32_t>("local header offset");
        const std::string member = cd.read_string(name_len, "member name");
        cd.need(extra_len, "extra field");
        read_zip64_extra(ByteReader(cd.here(), extra_len, name), size, compressed, offset);
        cd.skip(uint64_t(extra_len) + comment_len, "extra field and comment");
        if (flags & 1) bad("member '" + member + "' is encrypted");
        if (method != 0)
            bad("member '" + member + "' is compressed (method " + std::to_string(method) +
                "); only stored members, as torch.save writes them, are read");
        if (compressed != size) bad("member '" + member + "' claims different stored and plain sizes");
        // The data follows the local header, whose own name and extra lengths may differ.
        if (offset > b.size() || b.size() - offset < 30) bad("member '" + member + "' lies outside the file");
        ByteReader lh(b.data() + offset, b.size() - offset, name);
        if (lh.read<uint32_t>("local header signature") != kLocalHeader) bad("member '" + member + "': bad local header");
        lh.skip(22, "local header");
        const uint16_t lname = lh.read<uint16_t>("name length"), lextra = lh.read<uint16_t>("extra length");
        lh.skip(uint64_t(lname) + lextra, "local name and extra field");
        lh.need(size, "member data");
        if (!members_.emplace(member, Member{lh.here(), size_t(size)}).second) bad("member '" + member + "' appears twice");
    }
}

const ZipArchive::Member* ZipArchive::find(const std::string& name) const {
    const auto it = members_.find(name);
    return it == members_.end() ? nullptr : &it->second;
}

}  // namespace medusa
