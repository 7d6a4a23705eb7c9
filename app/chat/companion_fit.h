// Files that go with a model (Medusa heads, an EAGLE layer, a tokenizer) checked
// against the model that is loaded: a file for another hidden size or vocabulary, or one trained
// for another model (its config.json's base_model_name_or_path), is dropped from the settings with
// a line saying why, and what fits is kept. The app checks whenever the model changes.
#pragma once
#include <string>
#include <vector>

#include "decode_settings.h"
#include "model/model_file.h"

namespace medusa::chat {

enum class Companion { Heads, EagleLayer, Tokenizer };

struct DroppedFile {
    Companion what;
    std::string path;
    std::string why;  // one line, naming the file
};

std::vector<DroppedFile> ill_fitting_files(const DecodeSettings& s, const ModelFile& model);
// Clears the dropped files from `s`; a mode left without its file decodes plainly.
void drop_files(DecodeSettings& s, const std::vector<DroppedFile>& dropped);

}  // namespace medusa::chat
