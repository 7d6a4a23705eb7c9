// llama2.c checkpoints: fp32 "version 0" (7-int header) and int8 "version 2" (magic ak42).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/file_bytes.h"
#include "model/model_file.h"

namespace medusa {
ModelFile load_llama2c(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);
// Checks the header and the file size it implies from the file's head, before the whole file is
// read: a file of gigabytes whose first bytes are no checkpoint costs no more than its head.
void check_llama2c_head(const FileHead& head, const std::string& name);
}  // namespace medusa
