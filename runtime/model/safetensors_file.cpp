#include "model/safetensors_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "model/atomic_file.h"
#include "model/file_bytes.h"
#include "model/json_file.h"

namespace medusa {

namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeader = 100u << 20;  // the reference implementation's limit

bool parse_index_type(const std::string& s, IndexTensor::Type& t) {
    if (s == "I64") t = IndexTensor::Type::I64;
    else if (s == "I32") t = IndexTensor::Type::I32;
    else if (s == "BOOL") t = IndexTensor::Type::Bool;
    else return false;
    return true;
}

size_t index_element_size(IndexTensor::Type t) {
    return t == IndexTensor::Type::I64 ? 8 : t == IndexTensor::Type::I32 ? 4 : 1;
}

bool parse_dtype(const std::string& s, DType& t) {
    if (s == "F32") t = DType::F32;
    else if (s == "F16") t = DType::F16;
    else if (s == "BF16") t = DType::BF16;
    else return false;
    return true;
}

// A non-negative JSON integer, or throws.
uint64_t as_u64(const json& v, const std::string& file, const std::string& what) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return uint64_t(v.get<int64_t>());
    throw FormatError(file + ": " + what + " is not a non-negative integer");
}

// The header's "__metadata__": string keys to string values.
std::map<std::string, std::string> metadata_of(const json& header, const std::string& name) {
    std::map<std::string, std::string> metadata;
    const auto it = header.find("__metadata__");
    if (it == header.end()) return metadata;
    if (!it->is_object()) throw FormatError(name + ": __metadata__ is not a JSON object");
    for (const auto& [key, value] : it->items()) {
        if (!value.is_string()) throw FormatError(name + ": __metadata__ value '" + key + "' is not a string");
        metadata[key] = value.get<std::string>();
    }
    return metadata;
}

}  // namespace

size_t safetensors_element_size(DType t) {
    switch (t) {
        case DType::F32: return 4;
        case DType::F16:
        case DType::BF16: return 2;
        default: throw std::invalid_argument(std::string("safetensors cannot hold ") + dtype_name(t) + " tensors");
    }
}

const char* safetensors_dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        default: throw std::invalid_argument(std::string("safetensors cannot hold ") + dtype_name(t) + " tensors");
    }
}

// The tensors a header describes, checked against the size of its file; each tensor's data is
// null, its byte range in the data section beside it.
struct SafetensorsLayout {
    std::vector<Tensor> tensors;       // in file order
    std::vector<uint64_t> begins;      // each one's offset in the data section
    std::vector<IndexTensor> index_tensors;
    std::vector<uint64_t> index_begins;
    std::map<std::string, std::string> metadata;
    uint64_t data_start = 0;           // 8 + the header's length
    uint64_t file_size = 0;            // what the layout was checked against
};

namespace {

// `head` holds at least the length field and the header (the file's first 8 + header_len bytes).
namespace {

// One tensor's description in the header, checked against the data section (`data_size` bytes
// from `data_start` in a file of `file_size`).
struct HeaderEntry {
    bool integer = false;
    Tensor tensor;       // when not integer
    IndexTensor index;   // when integer
    uint64_t begin = 0, end = 0;  // in the data section
};

HeaderEntry read_entry(const std::string& key, const json& v, uint64_t data_start, uint64_t file_size,
                       const std::string& name) {
    const uint64_t data_size = file_size - data_start;
    const std::string what = "tensor '" + key + "'";
    if (key.empty() || !v.is_object()) throw FormatError(name + ": " + what + " is not described by an object");
    const auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string() || sh == v.end() || !sh->is_array() || off == v.end() ||
        !off->is_array() || off->size() != 2)
        throw FormatError(name + ": " + what + " needs dtype, shape and data_offsets [begin, end]");
    HeaderEntry e;
    Tensor& t = e.tensor;
    IndexTensor& it = e.index;
    t.name = it.name = key;
    e.integer = parse_index_type(dt->get<std::string>(), it.type);
    if (!e.integer && !parse_dtype(dt->get<std::string>(), t.type))
        throw FormatError(name + ": " + what + " has dtype " + dt->get<std::string>() +
                          ", which is not supported (F32, F16, BF16, and I64, I32 or BOOL for indices are)");
    if (sh->size() > 8) throw FormatError(name + ": " + what + " has " + std::to_string(sh->size()) + " dimensions");
    uint64_t numel = 1;
    for (const auto& d : *sh) {
        const uint64_t n = as_u64(d, name, what + " dimension");
        if (n > (1ull << 40) || (n && numel > (1ull << 40) / n))
            throw FormatError(name + ": " + what + " is absurdly large");
        numel *= n;
        t.shape.push_back(int64_t(n));
    }
    e.begin = as_u64((*off)[0], name, what + " data offset");
    e.end = as_u64((*off)[1], name, what + " data offset");
    const uint64_t nbytes = numel * (e.integer ? index_element_size(it.type) : safetensors_element_size(t.type));
    if (e.end < e.begin || e.end - e.begin != nbytes)
        throw FormatError(name + ": " + what + " data_offsets [" + std::to_string(e.begin) + ", " +
                          std::to_string(e.end) + ") do not hold its " + std::to_string(nbytes) + " bytes");
    if (e.end > data_size)
        throw FormatError(name + ": " + what + " data [offset " + std::to_string(data_start + e.begin) + ", " +
                          std::to_string(nbytes) + " bytes] lies outside the file (size " + std::to_string(file_size) +
                          ")");
    it.shape = t.shape;
    it.nbytes = t.nbytes = size_t(nbytes);
    return e;
}

// The entries in the order of their data, into `out`; as the reference implementation demands,
// the data section is exactly covered, no overlaps, no holes.
void place_entries(std::vector<HeaderEntry>& entries, uint64_t data_size, SafetensorsLayout& out,
                   const std::string& name) {
    std::vector<size_t> order(entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const HeaderEntry &x = entries[a], &y = entries[b];
        return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
    });
    uint64_t at = 0;
    for (size_t i : order) {
        HeaderEntry& e = entries[i];
        if (e.begin != at)
            throw FormatError(name + ": tensor '" + e.tensor.name + "' data starts at " + std::to_string(e.begin) +
                              " but the previous tensor ends at " + std::to_string(at) +
                              " (overlap or hole in the data section)");
        at = e.end;
        if (e.integer) {
            out.index_tensors.push_back(std::move(e.index));
            out.index_begins.push_back(e.begin);
        } else {
            out.tensors.push_back(std::move(e.tensor));
            out.begins.push_back(e.begin);
        }
    }
    if (at != data_size)
        throw FormatError(name + ": the tensors cover " + std::to_string(at) + " bytes of a " +
                          std::to_string(data_size) + "-byte data section");
}

}  // namespace

SafetensorsLayout parse_header(const std::vector<uint8_t>& head, uint64_t file_size, const std::string& name) {
    ByteReader r(head.data(), head.size(), name, file_size);
    const uint64_t header_len = r.read<uint64_t>("safetensors header length");
    if (header_len > kMaxHeader)
        throw FormatError(name + ": safetensors header length " + std::to_string(header_len) + " is absurd");
    r.need(header_len, "safetensors JSON header");
    const char* h = reinterpret_cast<const char*>(r.here());
    check_json_depth(h, h + header_len, name);
    const json header = json::parse(h, h + header_len, nullptr, /*allow_exceptions=*/false);
    if (header.is_discarded() || !header.is_object())
        throw FormatError(name + ": safetensors header is not a JSON object");
    SafetensorsLayout out;
    out.metadata = metadata_of(header, name);
    out.data_start = 8 + header_len;
    out.file_size = file_size;
    std::vector<HeaderEntry> entries;
    for (const auto& [key, v] : header.items())
        if (key != "__metadata__") entries.push_back(read_entry(key, v, out.data_start, file_size, name));
    place_entries(entries, file_size - out.data_start, out, name);
    return out;
}

// The first 8 + header_len bytes of the file at `path`.
FileHead read_header_bytes(const std::string& path) {
    const FileHead len = read_file_head(path, 8);
    ByteReader r(len.bytes.data(), len.bytes.size(), path, len.file_size);
    const uint64_t header_len = r.read<uint64_t>("safetensors header length");
    if (header_len > kMaxHeader)
        throw FormatError(path + ": safetensors header length " + std::to_string(header_len) + " is absurd");
    return read_file_head(path, 8 + header_len);
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path, uint64_t max_bytes) {
    // The header first, against the file's size: a file whose header covers less than the file
    // (gigabytes of anything after a valid header) is refused before the rest is read.
    const FileHead head = read_header_bytes(path);
    SafetensorsLayout layout = parse_header(head.bytes, head.file_size, path);
    return with_data(std::move(layout), read_file_bytes(path, max_bytes), path);
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
    const FileHead head = read_header_bytes(path);
    return parse_header(head.bytes, head.file_size, path).metadata;
}

SafetensorsFile SafetensorsFile::from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                             const std::string& name) {
    SafetensorsLayout layout = parse_header(*bytes, bytes->size(), name);
    return with_data(std::move(layout), std::move(bytes), name);
}

SafetensorsFile SafetensorsFile::with_data(SafetensorsLayout layout, std::shared_ptr<const std::vector<uint8_t>> bytes,
                                           const std::string& name) {
    if (bytes->size() != layout.file_size)  // checked against a header of another size
        throw FormatError(name + ": the file changed while it was read");
    SafetensorsFile f;
    f.path_ = name;
    for (size_t i = 0; i < layout.tensors.size(); ++i)
        layout.tensors[i].data = bytes->data() + layout.data_start + layout.begins[i];
    for (size_t i = 0; i < layout.index_tensors.size(); ++i)
        layout.index_tensors[i].data = bytes->data() + layout.data_start + layout.index_begins[i];
    f.tensors_ = std::move(layout.tensors);
    f.index_tensors_ = std::move(layout.index_tensors);
    for (size_t i = 0; i < f.tensors_.size(); ++i) f.index_.emplace(f.tensors_[i].name, i);
    f.metadata_ = std::move(layout.metadata);
    f.bytes_ = std::move(bytes);
    return f;
}

const Tensor* SafetensorsFile::find(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

const IndexTensor* SafetensorsFile::find_index(const std::string& name) const {
    for (const IndexTensor& t : index_tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

int64_t IndexTensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::vector<int64_t> IndexTensor::values() const {
    std::vector<int64_t> v(static_cast<size_t>(numel()));
    for (size_t i = 0; i < v.size(); ++i) {
        if (type == Type::I64) {
            std::memcpy(&v[i], data + 8 * i, 8);
        } else if (type == Type::I32) {
            int32_t x;
            std::memcpy(&x, data + 4 * i, 4);
            v[i] = x;
        } else {
            v[i] = data[i] != 0;
        }
    }
    return v;
}

const Tensor& SafetensorsFile::get(const std::string& name) const {
    if (const Tensor* t = find(name)) return *t;
    throw FormatError(path_ + ": tensor '" + name + "' is missing");
}

std::vector<uint8_t> serialize_safetensors(const std::vector<Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata,
                                           const std::vector<IndexTensor>& indices) {
    json header = json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    uint64_t at = 0;
    std::set<std::string> names;
    struct Part {
        const uint8_t* data;
        size_t nbytes;
    };
    std::vector<Part> parts;
    auto add = [&](const std::string& name, const char* dtype, const std::vector<int64_t>& shape, uint64_t want,
                   const uint8_t* data, size_t nbytes) {
        if (name.empty() || name == "__metadata__" || !names.insert(name).second)
            throw std::invalid_argument("safetensors: bad or repeated tensor name '" + name + "'");
        if (want != nbytes || (nbytes && !data))
            throw std::invalid_argument("safetensors: tensor '" + name + "' holds " + std::to_string(nbytes) +
                                        " bytes, its shape needs " + std::to_string(want));
        header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {at, at + want}}};
        at += want;
        parts.push_back({data, nbytes});
    };
    for (const Tensor& t : tensors)
        add(t.name, safetensors_dtype_name(t.type), t.shape, uint64_t(t.numel()) * safetensors_element_size(t.type),
            t.data, t.nbytes);
    for (const IndexTensor& t : indices) {
        const char* dtype = t.type == IndexTensor::Type::I64 ? "I64" : t.type == IndexTensor::Type::I32 ? "I32" : "BOOL";
        add(t.name, dtype, t.shape, uint64_t(t.numel()) * index_element_size(t.type), t.data, t.nbytes);
    }
    std::string text = json_text(header, -1);
    text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
    std::vector<uint8_t> out(8 + text.size() + at);
    const uint64_t len = text.size();
    std::memcpy(out.data(), &len, 8);
    std::memcpy(out.data() + 8, text.data(), text.size());
    uint8_t* p = out.data() + 8 + text.size();
    for (const Part& part : parts) {
        if (part.nbytes) std::memcpy(p, part.data, part.nbytes);
        p += part.nbytes;
    }
    return out;
}

IndexTensor i64_tensor(std::string name, const std::vector<int64_t>& v) {
    IndexTensor t;
    t.name = std::move(name);
    t.type = IndexTensor::Type::I64;
    t.shape = {int64_t(v.size())};
    t.data = reinterpret_cast<const uint8_t*>(v.data());
    t.nbytes = v.size() * 8;
    return t;
}

IndexTensor bool_tensor(std::string name, const std::vector<uint8_t>& v) {
    IndexTensor t;
    t.name = std::move(name);
    t.type = IndexTensor::Type::Bool;
    t.shape = {int64_t(v.size())};
    t.data = v.data();
    t.nbytes = v.size();
    return t;
}

void write_safetensors(const std::string& path, const std::vector<Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    const std::vector<uint8_t> bytes = serialize_safetensors(tensors, metadata);
    write_file_atomically(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

}  // namespace medusa
