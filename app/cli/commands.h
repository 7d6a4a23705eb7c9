// The subcommands of `medusa`; each returns the process exit code.
#pragma once

namespace medusa::cli {
int run_generate(int argc, char** argv);
int run_info(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_train_heads(int argc, char** argv);
int run_tune_tree(int argc, char** argv);
int run_tree(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_export_heads(int argc, char** argv);
}  // namespace medusa::cli
