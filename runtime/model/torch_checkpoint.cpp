#include "model/torch_checkpoint.h"

#include "model/file_bytes.h"
#include "model/torch_pickle.h"
#include "model/zip_archive.h"

namespace medusa {

namespace {

struct ElementType {
    DType dtype;
    size_t bytes;
    bool integer = false;
    IndexTensor::Type index = IndexTensor::Type::I64;
};

bool element_type(const std::string& storage, ElementType& t) {
    if (storage == "FloatStorage") t = {DType::F32, 4};
    else if (storage == "HalfStorage") t = {DType::F16, 2};
    else if (storage == "BFloat16Storage") t = {DType::BF16, 2};
    else if (storage == "LongStorage") t = {DType::F32, 8, true, IndexTensor::Type::I64};
    else if (storage == "IntStorage") t = {DType::F32, 4, true, IndexTensor::Type::I32};
    else if (storage == "BoolStorage") t = {DType::F32, 1, true, IndexTensor::Type::Bool};
    else return false;
    return true;
}

}  // namespace

const Tensor* TorchCheckpoint::find(const std::string& name) const {
    const auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
}

bool looks_like_zip(const std::vector<uint8_t>& b) { return b.size() >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4; }

TorchCheckpoint read_torch_checkpoint(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    if (!bytes || !looks_like_zip(*bytes))
        throw FormatError(name + ": not a PyTorch checkpoint (torch.save's ZIP format); checkpoints of the legacy "
                                 "pre-1.6 format are not supported");
    const ZipArchive zip(bytes, name);
    // The archive holds one folder: <folder>/data.pkl, <folder>/data/<storage key>, ...
    std::string folder;
    for (const auto& [member, _] : zip.members()) {
        const size_t slash = member.find('/');
        if (slash != std::string::npos && member.compare(slash, std::string::npos, "/data.pkl") == 0) {
            if (!folder.empty()) throw FormatError(name + ": holds more than one data.pkl");
            folder = member.substr(0, slash + 1);
        }
    }
    if (folder.empty()) throw FormatError(name + ": a ZIP archive without data.pkl is not a PyTorch checkpoint");
    if (const auto* order = zip.find(folder + "byteorder"))
        if (std::string(reinterpret_cast<const char*>(order->data), order->size) != "little")
            throw FormatError(name + ": big-endian checkpoints are not supported");
    const auto* pkl = zip.find(folder + "data.pkl");
    TorchCheckpoint c;
    c.path = name;
    c.bytes = bytes;
    for (const auto& [key, ref] : read_torch_state_dict(pkl->data, pkl->size, name)) {
        ElementType et;
        if (!element_type(ref.storage_type, et)) {
            c.others[key] = ref.storage_type;
            continue;
        }
        const auto* storage = zip.find(folder + "data/" + ref.storage_key);
        if (!storage) throw FormatError(name + ": tensor '" + key + "' names storage " + ref.storage_key + ", which is missing");
        // Row-major and dense: what a state dict of Linear weights holds.
        int64_t numel = 1, expect = 1;
        for (size_t d = ref.shape.size(); d-- > 0;) {
            if (ref.shape[d] != 1 && ref.stride[d] != expect)
                throw FormatError(name + ": tensor '" + key + "' is not stored contiguously (a view): not supported");
            expect *= ref.shape[d];
        }
        for (int64_t d : ref.shape) {
            if (d > 0 && numel > (int64_t(1) << 40) / d) throw FormatError(name + ": tensor '" + key + "' is absurdly large");
            numel *= d;
        }
        const uint64_t first = uint64_t(ref.offset), count = uint64_t(numel), have = storage->size / et.bytes;
        if (first > have || count > have - first)
            throw FormatError(name + ": tensor '" + key + "' reaches past the end of its storage");
        if (et.integer) {
            IndexTensor t;
            t.name = key;
            t.type = et.index;
            t.shape = ref.shape;
            t.data = storage->data + first * et.bytes;
            t.nbytes = size_t(count * et.bytes);
            c.indices[key] = t;
            c.others[key] = ref.storage_type;
            continue;
        }
        Tensor t;
        t.name = key;
        t.type = et.dtype;
        t.shape = ref.shape;
        t.data = storage->data + first * et.bytes;
        t.nbytes = size_t(count * et.bytes);
        c.tensors[key] = t;
    }
    return c;
}

SafetensorsFile TorchCheckpoint::as_safetensors() const {
    std::vector<Tensor> floats;
    std::vector<IndexTensor> ints;
    for (const auto& [name, t] : tensors) floats.push_back(t);
    for (const auto& [name, t] : indices) ints.push_back(t);
    auto bytes = std::make_shared<const std::vector<uint8_t>>(serialize_safetensors(floats, {}, ints));
    return SafetensorsFile::from_memory(bytes, path);
}

TorchCheckpoint open_torch_checkpoint(const std::string& path) { return read_torch_checkpoint(read_file_bytes(path), path); }

}  // namespace medusa
