# Writes the tiny synthetic package twice (published and remapped type ids) with `tern-dev synth`.
foreach(ids published remapped)
  execute_process(COMMAND ${TERN_DEV} synth --geometry tiny --seed 7 --vocab ${VOCAB}
                  --out ${OUT}/${ids} --type-ids ${ids} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tern-dev synth --type-ids ${ids} failed (${rc})")
  endif()
endforeach()
