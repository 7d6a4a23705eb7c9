// libFuzzer target: the restricted pickle reader on arbitrary bytes (a state dict's data.pkl).
// It must build a name -> tensor map or refuse with a FormatError; nothing else may happen.
#include <cstdint>

#include "model/model_file.h"
#include "model/torch_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        for (const auto& [name, ref] : medusa::read_torch_state_dict(data, size, "fuzz.pkl"))
            if (ref.shape.size() != ref.stride.size()) __builtin_trap();
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
