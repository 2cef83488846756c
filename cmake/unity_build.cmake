# Unity builds, for build time only: CI builds the tree three times on two cores, and most of a file's compile
# time went to the templates of nlohmann/json, GoogleTest and the standard library that every file instantiates
# and compiles again (2.5-5 s per test file at -O0, of which parsing was a sixth). Compiling 8 files as one
# does that once per batch: in the release build the test files' compile time fell from 540 to 184 CPU seconds
# and the libraries' from 640 to 320 (2-vCPU Zen 5, .ninja_log).
# Files keep their own anonymous namespaces only in a plain build, so two files of one target may not define the
# same internal name; shared helpers go in a header (e.g. tests/server/test_server.h).
# -DVERDICT_UNITY=OFF compiles every file on its own (each still includes what it uses).
option(VERDICT_UNITY "Compile the files of the libraries and tests in batches (unity build)" ON)

# verdict_unity(target): the target's files compile in batches of 8. Files with their own compile options
# (-ffp-contract=off, an ISA's -m flags) must stay out: mark them SKIP_UNITY_BUILD_INCLUSION.
function(verdict_unity target)
  if(VERDICT_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
