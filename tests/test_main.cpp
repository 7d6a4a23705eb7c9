// Catch2 entry point for the whole suite.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
