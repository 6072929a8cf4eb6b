# cmake -DINPUT=file -DOUTPUT=file.cpp -DNAME=symbol -DSASS="75;80" -DPTX=75 -P embed_file.cmake
# Writes INPUT's bytes as a C++ array `NAME` (with NAME_size), and the architectures the
# fatbin holds machine code for (NAME_sass) and its PTX's (NAME_ptx).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
string(REPLACE ";" ", " sass "${SASS}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by lib/embed_file.cmake.\n#include <cstddef>\nnamespace cudatool::check::detail {\nalignas(8) extern const unsigned char ${NAME}[] = {\n${bytes}};\nextern const std::size_t ${NAME}_size = ${size};\nextern const int ${NAME}_sass[] = {${sass}, 0};\nextern const int ${NAME}_ptx = ${PTX};\n}\n")
