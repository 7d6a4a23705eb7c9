// A training checkpoint is several files (parameters, their config, the optimizer's moments and
// step) that are only meaningful together: resuming with step-120 parameters and step-60 moments
// silently trains a different model. So a checkpoint is committed as one folder, swapped in whole.
#pragma once
#include <functional>
#include <string>

namespace medusa::train {

// Fills a fresh staging folder beside `dir` with `write_files(staging)`, flushes it, then puts it
// in place of `dir` in one rename. Killed at any moment, `dir` holds either the previous complete
// checkpoint or the new one (see committed_checkpoint). Failures throw naming the path and errno.
void commit_checkpoint(const std::string& dir, const std::function<void(const std::string& staging)>& write_files);

// Whether `dir` holds a committed checkpoint, after finishing a swap that a kill interrupted (on
// file systems without an atomic exchange the old folder is moved aside for a moment).
bool committed_checkpoint(const std::string& dir);

}  // namespace medusa::train
