# Turns a text file into a C array `const char SYMBOL[]` (NUL-terminated),
# so the compiler carries its standard library without a run-time path.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "/* generated from ${IN}; do not edit */\nconst char ${SYMBOL}[] = {${body}0x00};\n")
