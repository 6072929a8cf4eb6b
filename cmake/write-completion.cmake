# cmake -DCUDATOOL=<binary> -DSHELL_NAME=<bash|zsh|fish> -DOUTPUT=<file> -P write-completion.cmake
execute_process(COMMAND ${CUDATOOL} completion ${SHELL_NAME} OUTPUT_FILE ${OUTPUT}
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  file(REMOVE ${OUTPUT})
  message(FATAL_ERROR "cudatool completion ${SHELL_NAME} failed: ${result}")
endif()
