# A copy of the bundled model that declares what a model trained on single short utterances
# declares (clips of at most 6.5 s read in pieces of 4 s, no context, no JSON prompt:
# tern.trained.*; the bundled model's own keys are overwritten, not removed), written with
# `tern-dev convert --set-*`: the engine's handling of such declarations is tested end to end
# whatever the bundled model itself declares. Same weights, so the same words.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
file(COPY ${MODEL}/vibeasr-vae-encoder-i8_s.gguf DESTINATION ${OUT})
execute_process(COMMAND ${TERN_DEV} convert -i ${MODEL}/vibeasr-lm-i2_s-embed-q6_k.gguf
                -o ${OUT}/vibeasr-lm-i2_s-embed-q6_k.gguf
                --set-f32 tern.trained.max_audio_seconds=6.5
                --set-f32 tern.trained.chunk_seconds=4
                --set-bool tern.trained.context=false --set-bool tern.trained.json_format=false
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tern-dev convert --set-* on the bundled model failed (${rc})")
endif()
