#include "model/gguf_metadata.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace medusa {

namespace {

constexpr uint64_t kMaxCount = 1u << 24;      // no real file has more keys or tensors
// Nor array items: the largest vocabularies have 262,144 tokens, the largest merge lists under
// 300,000. Checked before anything is allocated, this keeps a vocabulary of 10 million tiny tokens
// (90 MB of file, a gigabyte as strings) from being read at all.
constexpr uint64_t kMaxArrayItems = 1u << 20;
constexpr uint64_t kMaxString = 1u << 20;     // nor longer strings

size_t scalar_size(uint32_t type) {
    switch (type) {
        case U8: case I8: case BOOL: return 1;
        case U16: case I16: return 2;
        case U32: case I32: case F32: return 4;
        case U64: case I64: case F64: return 8;
        default: return 0;
    }
}

std::string read_gguf_string(ByteReader& r, const char* what) {
    const uint64_t n = r.read<uint64_t>(what);
    if (n > kMaxString)
        throw FormatError(r.name() + ": " + what + " at offset " + std::to_string(r.pos() - 8) + " has an absurd length " +
                          std::to_string(n));
    return r.read_string(n, what);
}

double read_scalar(ByteReader& r, uint32_t type) {
    switch (type) {
        case U8: return r.read<uint8_t>("metadata value");
        case I8: return r.read<int8_t>("metadata value");
        case U16: return r.read<uint16_t>("metadata value");
        case I16: return r.read<int16_t>("metadata value");
        case U32: return r.read<uint32_t>("metadata value");
        case I32: return r.read<int32_t>("metadata value");
        case F32: return r.read<float>("metadata value");
        case BOOL: return r.read<uint8_t>("metadata value");
        case U64: return double(r.read<uint64_t>("metadata value"));
        case I64: return double(r.read<int64_t>("metadata value"));
        case F64: return r.read<double>("metadata value");
        default: throw FormatError(r.name() + ": unknown metadata value type " + std::to_string(type));
    }
}

GgufValue read_value(ByteReader& r, uint32_t type, const std::string& key) {
    GgufValue v;
    v.type = type;
    if (type == STRING) {
        v.text = read_gguf_string(r, "metadata string");
    } else if (type == ARRAY) {
        v.item_type = r.read<uint32_t>("array type");
        const uint64_t n = r.read<uint64_t>("array length");
        const size_t item_min = v.item_type == STRING ? 8 : scalar_size(v.item_type);
        if (item_min == 0)
            throw FormatError(r.name() + ": metadata array '" + key + "' has item type " + std::to_string(v.item_type) +
                              " (nested arrays and unknown types are not supported)");
        // Checked before allocating: every item needs at least item_min bytes of the file.
        if (n > r.remaining() / item_min)
            throw FormatError(r.name() + ": metadata array '" + key + "' claims " + std::to_string(n) +
                              " items, more than the file can hold");
        if (n > kMaxArrayItems)
            throw FormatError(r.name() + ": metadata array '" + key + "' has " + std::to_string(n) + " items (at most " +
                              std::to_string(kMaxArrayItems) + " are read: no vocabulary is that large)");
        if (v.item_type == STRING) v.texts.reserve(size_t(n));
        else v.numbers.reserve(size_t(n));
        for (uint64_t i = 0; i < n; ++i) {
            if (v.item_type == STRING) v.texts.push_back(read_gguf_string(r, "array string"));
            else v.numbers.push_back(read_scalar(r, v.item_type));
        }
    } else {
        v.number = read_scalar(r, type);
    }
    return v;
}

}  // namespace

double GgufMetadata::number(const std::string& key, double fallback, bool required) const {
    auto it = kv_.find(key);
    if (it == kv_.end()) {
        if (required) throw FormatError(file_ + ": metadata key '" + key + "' is missing");
        return fallback;
    }
    if (it->second.type == STRING || it->second.type == ARRAY)
        throw FormatError(file_ + ": metadata key '" + key + "' is not a number");
    return it->second.number;
}

int GgufMetadata::integer(const std::string& key, double fallback, bool required) const {
    const double v = number(key, fallback, required);
    if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != std::floor(v))
        throw FormatError(file_ + ": metadata key '" + key + "' = " + std::to_string(v) + " is not a valid int32");
    return int(v);
}

float GgufMetadata::real(const std::string& key, double fallback) const {
    const double v = number(key, fallback, false);
    if (!std::isfinite(v) || std::fabs(v) > 1e30)
        throw FormatError(file_ + ": metadata key '" + key + "' is not a finite number");
    return float(v);
}

std::string GgufMetadata::text(const std::string& key) const {
    auto it = kv_.find(key);
    return it != kv_.end() && it->second.type == STRING ? it->second.text : "";
}

const GgufValue* GgufMetadata::array(const std::string& key, uint32_t item_type) const {
    auto it = kv_.find(key);
    if (it == kv_.end()) return nullptr;
    if (it->second.type != ARRAY || (it->second.item_type == STRING) != (item_type == STRING))
        throw FormatError(file_ + ": metadata key '" + key + "' is not an array of the expected type");
    return &it->second;
}

bool GgufMetadata::boolean(const std::string& key, bool fallback) const {
    auto it = kv_.find(key);
    if (it == kv_.end()) return fallback;
    if (it->second.type != BOOL) throw FormatError(file_ + ": metadata key '" + key + "' is not a boolean");
    return it->second.number != 0;
}

GgufHeader read_gguf_header(const std::vector<uint8_t>& bytes, const std::string& name) {
    return read_gguf_header(bytes.data(), bytes.size(), name, bytes.size());
}

GgufHeader read_gguf_header_of_file(const std::string& path) {
    // Growing heads: a vocabulary's metadata is a few MB, a model's tensors are gigabytes.
    for (uint64_t head = uint64_t(1) << 20;; head *= 4) {
        const FileHead h = read_file_head(path, head);
        try {
            return read_gguf_header(h.bytes.data(), h.bytes.size(), path, h.file_size);
        } catch (const HeadTooShort&) {
            if (h.whole()) throw;  // cannot happen: a whole file is never too short, only truncated
        }
    }
}

GgufHeader read_gguf_header(const uint8_t* data, size_t size, const std::string& name, uint64_t file_size) {
    ByteReader r(data, size, name, file_size);
    if (r.read<uint32_t>("magic") != 0x46554747) throw FormatError(name + ": not a GGUF file (bad magic)");
    const uint32_t version = r.read<uint32_t>("version");
    if (version != 2 && version != 3)
        throw FormatError(name + ": GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
    const uint64_t n_tensors = r.read<uint64_t>("tensor count");
    const uint64_t n_kv = r.read<uint64_t>("metadata count");
    // Each key or tensor description takes at least 8 bytes: reject counts the file cannot hold.
    const uint64_t room = r.remaining() / 8;
    if (n_tensors > kMaxCount || n_kv > kMaxCount || n_tensors > room || n_kv > room)
        throw FormatError(name + ": absurd counts (" + std::to_string(n_tensors) + " tensors, " +
                          std::to_string(n_kv) + " metadata keys) for a file of " + std::to_string(r.file_size()) + " bytes");
    std::map<std::string, GgufValue> kv;
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = read_gguf_string(r, "metadata key");
        const uint32_t type = r.read<uint32_t>("metadata type");
        GgufValue v = read_value(r, type, key);
        if (!kv.emplace(key, std::move(v)).second) throw FormatError(name + ": metadata key '" + key + "' repeats");
    }
    GgufHeader h{GgufMetadata(std::move(kv), name), {}, 0};
    const GgufMetadata& meta = h.meta;
    const double align = meta.number("general.alignment", 32, false);
    if (!(align >= 1 && align <= 65536) || (uint64_t(align) & (uint64_t(align) - 1)) || align != std::floor(align))
        throw FormatError(name + ": general.alignment " + std::to_string(align) + " is not a power of two");
    const uint64_t alignment = uint64_t(align);

    std::vector<GgufTensorInfo>& infos = h.tensors;
    std::set<std::string> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensorInfo t;
        t.name = read_gguf_string(r, "tensor name");
        if (!names.insert(t.name).second) throw FormatError(name + ": tensor '" + t.name + "' appears twice");
        const uint32_t n_dims = r.read<uint32_t>("tensor dimension count");
        if (n_dims == 0 || n_dims > 4)
            throw FormatError(name + ": tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions");
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne = r.read<uint64_t>("tensor dimension");
            if (ne == 0 || ne > (1ull << 32))
                throw FormatError(name + ": tensor '" + t.name + "' has dimension " + std::to_string(ne));
            t.dims.push_back(ne);
        }
        t.type = r.read<uint32_t>("tensor type");
        t.offset = r.read<uint64_t>("tensor offset");
        if (t.offset % alignment)
            throw FormatError(name + ": tensor '" + t.name + "' offset " + std::to_string(t.offset) +
                              " is not a multiple of the alignment " + std::to_string(alignment));
        infos.push_back(std::move(t));
    }
    // A file without tensors (a vocabulary) may end right after its header, before the padding.
    const uint64_t data_start = std::min<uint64_t>((r.pos() + alignment - 1) / alignment * alignment,
                                                   infos.empty() ? r.file_size() : UINT64_MAX);
    if (data_start > r.file_size()) throw FormatError(name + ": truncated before the tensor data");
    h.data_start = data_start;
    return h;
}

}  // namespace medusa
