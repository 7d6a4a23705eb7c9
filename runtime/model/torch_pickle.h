// The state dict inside a PyTorch checkpoint (torch.save's data.pkl), read by a pickle machine
// that executes nothing: it knows only the opcodes and the four globals a state dict of tensors
// needs (collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter and the
// storage classes) and refuses everything else, naming the opcode or the global.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace medusa {

// Where one tensor's values lie: elements [offset, ...) of storage `storage_key` (the archive
// member data/<key>), laid out by shape and stride (in elements).
struct TorchTensorRef {
    std::string storage_key;
    std::string storage_type;  // "FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage", ...
    std::vector<int64_t> shape, stride;
    int64_t offset = 0;
};

// Name -> tensor for every tensor in the pickled object: a dict of tensors, with nested dicts'
// names joined by "." (other values are skipped). Throws FormatError "<name>: ...".
std::map<std::string, TorchTensorRef> read_torch_state_dict(const uint8_t* data, size_t size, const std::string& name);

}  // namespace medusa
