# Warnings for verdict's own targets: verdict_warnings(target)
function(verdict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Wunused -Woverloaded-virtual -Wimplicit-fallthrough)
  if(VERDICT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
