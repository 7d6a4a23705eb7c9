// Catch2 entry point for the app's window-free tests. Chats the tests' apps save go to a folder of
// this process's own, removed at the end, never to the user's.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include "temp_dir.h"

int main(int argc, char** argv) {
    medusa::test::TempDir chats("medusa-chat-tests-chats");
    setenv("MEDUSA_CHATS", chats.path.c_str(), 1);
    return Catch::Session().run(argc, argv);
}
