// A PyTorch checkpoint (torch.save's ZIP format, e.g. Medusa's medusa_lm_head.pt) read as named
// tensors without running any of it: the ZIP members are read where they lie, the pickled state
// dict by the restricted reader of torch_pickle.h.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/format_error.h"
#include "model/safetensors_file.h"

namespace medusa {

struct TorchCheckpoint {
    std::string path;
    std::map<std::string, Tensor> tensors;         // F32, F16 and BF16 tensors, by state-dict name
    std::map<std::string, IndexTensor> indices;    // I64, I32 and BOOL tensors (EAGLE-3's d2t, t2d)
    std::map<std::string, std::string> others;     // the tensors not F32/F16/BF16: name -> storage type
    std::shared_ptr<const std::vector<uint8_t>> bytes;  // keeps Tensor::data alive

    const Tensor* find(const std::string& name) const;
    // Its tensors as a safetensors file in memory (the readers of safetensors files read it then).
    SafetensorsFile as_safetensors() const;
};

// Throws FormatError "<name>: ..." for a malformed or unsupported checkpoint.
TorchCheckpoint read_torch_checkpoint(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);
TorchCheckpoint open_torch_checkpoint(const std::string& path);
// True when the bytes start like a ZIP archive (what torch.save has written since PyTorch 1.6).
bool looks_like_zip(const std::vector<uint8_t>& bytes);

}  // namespace medusa
