# chat.screenshot and chat.screenshot_draft: run the app under Xvfb for a few decoding steps,
# then check the PNG it wrote. -DARGS adds flags (a ;-list), -DMODE is the prefix the last turn's
# mode must have in the sidecar JSON (what the flags were meant to select), -DSIZE the window
# (WIDTHxHEIGHT, 1440x880 by default). The app's defaults shape the steps: a picked mode drafts
# every step it can (the step controller shapes, never drops, its draft), so the tree panel has a
# tree to show. -DBENCH=medusa runs a short `medusa bench` of -DMODEL first and opens its charts in
# the metrics panel.
file(REMOVE ${SHOT} ${SHOT}.json ${SHOT}.bench.json)
if(BENCH)
  execute_process(
    COMMAND ${BENCH} bench -m ${MODEL} --runs 1 --tokens 16 --max-block 16 --no-cpu --compare ar,ngram
            --json ${SHOT}.bench.json
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "medusa bench exited with ${rc}")
  endif()
  list(APPEND ARGS --charts ${SHOT}.bench.json)
endif()
if(NOT SIZE)
  set(SIZE 1440x880)
endif()
string(REPLACE "x" ";" WH ${SIZE})
list(GET WH 0 W)
list(GET WH 1 H)
execute_process(
  COMMAND ${XVFB_RUN} -a -s "-screen 0 2000x1200x24" ${APP} --prompt "Once upon a time" --steps 12
          --screenshot ${SHOT} --size ${SIZE} ${ARGS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "medusa-chat --screenshot exited with ${rc}")
endif()
if(NOT EXISTS ${SHOT} OR NOT EXISTS ${SHOT}.json)
  message(FATAL_ERROR "no screenshot or layout file was written")
endif()
execute_process(COMMAND ${CHECK} ${SHOT} ${SHOT}.json ${W} ${H} ${MODE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the screenshot check failed")
endif()
