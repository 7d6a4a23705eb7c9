// The error loading an EAGLE layer (folder or GGUF) for stories260K gives, or "no error": what
// the tests of broken EAGLE files compare.
#pragma once
#include <filesystem>
#include <string>

#include "llm/eagle_layer_io.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "test_paths.h"

namespace medusa::test {

inline std::string eagle_load_error(const std::filesystem::path& path) {
    const ModelFile target = load_model(model_path("stories260K.bin"));
    try {
        load_eagle_layer(path.string(), target.config);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace medusa::test
