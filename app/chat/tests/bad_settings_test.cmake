# chat.bad_settings: the scripted app given a tree or a model file that cannot load must exit
# non-zero within seconds, naming the value, not wait for a turn that never starts.
foreach(case "--tree;nosuch;nosuch" "-m;/nonexistent/model.bin;/nonexistent/model.bin")
  list(GET case 0 flag)
  list(GET case 1 value)
  list(GET case 2 named)
  execute_process(
    COMMAND ${XVFB_RUN} -a -s "-screen 0 2000x1200x24" ${APP} ${flag} ${value} --prompt "Once upon a time"
            --steps 4 --screenshot ${SHOT}
    RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "medusa-chat ${flag} ${value}: exit '${rc}' (a number other than 0 within 60 s expected)\n${err}")
  endif()
  string(FIND "${err}" "${named}" at)
  if(at LESS 0)
    message(FATAL_ERROR "medusa-chat ${flag} ${value}: the error does not name '${named}':\n${err}")
  endif()
endforeach()
