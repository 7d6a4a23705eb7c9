// The subcommands of `medusa`; each returns the process exit code.
#pragma once
#include <string>
#include <vector>

#include "args.h"
#include "chart.h"

namespace medusa::cli {
int run_generate(int argc, char** argv);
int run_serve(int argc, char** argv);
int run_info(int argc, char** argv);
int run_bench(int argc, char** argv);
// train --objective heads|joint|eagle|eagle3, and train-heads [--joint], train-eagle [--eagle3]
int run_train(int argc, char** argv);
int run_train_heads(int argc, char** argv);
int run_train_eagle(int argc, char** argv);
int run_train_eagle3(int argc, char** argv);  // train-eagle --eagle3
int run_train_joint(int argc, char** argv);  // train-heads --joint (Medusa-2)
int run_tune_tree(int argc, char** argv);
int run_tree(int argc, char** argv);
int run_plot(int argc, char** argv);

// Writes `--plot FILE`'s charts (PNG or SVG by extension) under a heading naming what they show.
void write_plot(const std::vector<charts::Chart>& charts, const std::string& what, const std::string& path);
int run_tokenize(int argc, char** argv);
int run_export_heads(int argc, char** argv);
int run_export_gguf(int argc, char** argv);
}  // namespace medusa::cli
