// Catch2 entry point for the app's window-free tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
