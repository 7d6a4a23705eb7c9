# Test executables build for the speed of building, not of running: their own code orchestrates
# what the runtime (built as configured) computes, so -O1 serves it, and every test file shares one
# precompiled Catch2 header. The file that defines Catch's main (CATCH_CONFIG_MAIN or _RUNNER before
# the include) reads the header itself. A clean build took 4.6 min instead of 6.1 on 2 cores.
function(fast_test_build target main_source)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
  target_precompile_headers(${target} PRIVATE <catch2/catch.hpp>)
  set_source_files_properties(${main_source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
