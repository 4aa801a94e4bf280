# SPDX-License-Identifier: MIT
# cmake -DIN=file.lua -DOUT=file.h -DNAME=ident -P embed_lua.cmake
# Writes OUT: `static const char NAME[] = {bytes}; ` with NAME_len, so Lua
# glue kept as a real file under lib/ is compiled into the binary (nothing
# to find at run time).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* generated from ${IN} by scripts/cmake/embed_lua.cmake */\n"
  "static const char ${NAME}[] = {\n${bytes}0};\n"
  "#define ${NAME}_len ((size_t)${len})\n")
