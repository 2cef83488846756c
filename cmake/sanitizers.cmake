# -DVERDICT_SANITIZE=ON: every target of the tree is built with ASan + UBSan.
if(VERDICT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
